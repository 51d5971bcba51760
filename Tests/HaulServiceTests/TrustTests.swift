import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// https against a server whose certificate a throwaway CA signed: trusted when `SSL_CERT_FILE` names that CA (as a
/// corporate CA is given), refused at once otherwise.
@Suite(.timeLimit(.minutes(2))) struct TrustTests {
    @Test func aCAGivenInSSLCertFileIsTrusted() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await TestHTTPServer(tls: certificates)
        defer { server.stop() }
        try await TransferFixture.with(environment: ["SSL_CERT_FILE": certificates.authority.path]) { f throws in
            let task = try await Self.download(server.url("/gen/200k?seed=51"), to: "secure.bin", f)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
            #expect(try await f.sha256(of: "secure.bin") == (try await TestHTTPServer.sha256OfGenerated(size: 200 * 1024, seed: 51)))
        }
    }

    @Test func aDirectoryGivenInSSLCertDirIsTrusted() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await TestHTTPServer(tls: certificates)
        defer { server.stop() }
        // A hashed directory, as c_rehash (openssl rehash) makes it.
        let directory = certificates.directory.appendingPathComponent("hashed")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let hash = try await Command.run("openssl", ["x509", "-hash", "-noout", "-in", certificates.authority.path])
        try FileManager.default.copyItem(
            at: certificates.authority,
            to: directory.appendingPathComponent(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + ".0")
        )
        try await TransferFixture.with(environment: ["SSL_CERT_DIR": directory.path]) { f throws in
            let task = try await Self.download(server.url("/gen/10k?seed=52"), to: "dir.bin", f)
            try await f.wait(task, until: .completed)
            #expect(try await f.errorName(task) == "")
        }
    }

    /// Without the CA, the server is not trusted: a permanent failure, not a retry, and a sentence that says so.
    @Test func anUnknownCAFailsTheTaskAtOnce() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let server = try await TestHTTPServer(tls: certificates)
        defer { server.stop() }
        try await TransferFixture.with { f throws in
            let task = try await Self.download(server.url("/gen/10k"), to: "untrusted.bin", f, retries: 5)
            try await f.wait(task, until: .completed, timeout: .seconds(10))
            #expect(try await f.errorName(task) == HaulErrorName.network.fullName)
            let message = try await f.property(task, .errorMessage).stringValue ?? ""
            #expect(message.contains("certificate of \(server.authority) is not trusted"), "\(message)")
        }
    }

    static func download(_ url: String, to name: String, _ f: TransferFixture, retries: UInt32 = 0) async throws
        -> ObjectPath
    {
        let reply = try await f.managerCall(
            .downloadWithOptions,
            [
                .string(url), .string(f.file(name)),
                .vardict(DownloadOption.values([.maxRetries: .uint32(retries)])),
            ]
        )
        return try #require(reply.first?.objectPathValue)
    }
}
