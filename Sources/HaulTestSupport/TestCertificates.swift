package import Foundation

/// A throwaway certificate authority and a server certificate it signed for 127.0.0.1 and localhost, made with the
/// `openssl` command in a temporary folder: what a corporate CA looks like to hauld.
package struct TestCertificates: Sendable {
    package let directory: URL
    /// The CA's certificate (PEM): what `SSL_CERT_FILE` names.
    package var authority: URL { directory.appendingPathComponent("ca.pem") }
    /// The server's certificate and key (PEM).
    package var serverCertificate: URL { directory.appendingPathComponent("server.pem") }
    package var serverKey: URL { directory.appendingPathComponent("server.key") }

    /// Makes a new CA and server certificate (a second or so of RSA key generation).
    package static func make() async throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(directory: directory)
        let extensions = directory.appendingPathComponent("server.ext")
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n".utf8).write(to: extensions)
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", path("ca.key"), "-out", path("ca.pem"),
             "-days", "2", "-subj", "/CN=Haul Test CA"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", path("server.key"), "-out", path("server.csr"),
             "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
             "-CAcreateserial", "-out", path("server.pem"), "-days", "2", "-extfile", extensions.path],
        ]
        for step in steps {
            let result = try await Command.run("openssl", step)
            guard result.status == 0 else {
                throw TestSupportError("openssl \(step.first ?? "") failed: \(result.stderr)")
            }
        }
        return certificates
    }

    package func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}
