import Foundation
import HaulCore
import Testing

@Suite(.timeLimit(.minutes(2))) struct RedirectTests {
    let current = URL(string: "http://example.test:8080/dir/file?x=1")!

    @Test func relativeTargetsResolveAgainstTheCurrentURL() throws {
        #expect(try Redirect.target(status: 302, location: "/other", from: current).url.absoluteString
            == "http://example.test:8080/other")
        #expect(try Redirect.target(status: 301, location: "next?y=2", from: current).url.absoluteString
            == "http://example.test:8080/dir/next?y=2")
        #expect(try Redirect.target(status: 307, location: "//cdn.test/a", from: current).url.absoluteString
            == "http://cdn.test/a")
        #expect(try Redirect.target(status: 308, location: "https://cdn.test:8443/b", from: current).url.port == 8443)
    }

    /// A `Location` with a port no socket can use once reached a trap inside the HTTP stack.
    @Test(arguments: [
        "http://127.0.0.1:65536/x", "http://127.0.0.1:99999/", "http://127.0.0.1:4294967296/",
        "https://127.0.0.1:99999/", "http://[::1]:70000/", "http://127.0.0.1:0/", "file:///etc/passwd",
        "ftp://example.test/", "http://", "http://[::1", "javascript:alert(1)", "http://a\u{1}b/",
        "http://127.0.0.1:18446744073709551617/",
    ])
    func unusableTargetsFailPermanently(_ location: String) {
        do {
            let url = try Redirect.target(status: 302, location: location, from: current)
            Issue.record("\(location) was accepted as \(url)")
        } catch {
            #expect(error.kind == .http && error.httpStatus == 302 && !error.isTransient)
            #expect(error.message.contains("cannot be followed"))
        }
    }

    @Test func theMessageHidesATargetsPassword() throws {
        do {
            _ = try Redirect.target(status: 302, location: "http://u:secret@127.0.0.1:70000/", from: current)
            Issue.record("accepted")
        } catch {
            #expect(!error.message.contains("secret"))
        }
    }

    @Test func originsAreSchemeHostAndPort() {
        let origin = URL(string: "http://Example.test/a")!
        #expect(Redirect.sameOrigin(URL(string: "http://example.test:80/b")!, origin))
        #expect(!Redirect.sameOrigin(URL(string: "https://example.test/b")!, origin))
        #expect(!Redirect.sameOrigin(URL(string: "http://example.test:8080/b")!, origin))
        #expect(!Redirect.sameOrigin(URL(string: "http://other.test/a")!, origin))
    }
}

@Suite(.timeLimit(.minutes(2))) struct RequestHeadersTests {
    let origin = URL(string: "http://alice:p%40ss@example.test/file")!

    @Test func userinfoBecomesBasicAuthorization() {
        let headers = RequestHeaders.forRequest(to: origin, origin: origin, clientHeaders: [:])
        #expect(headers.map(\.0) == ["Authorization"])
        #expect(headers.first?.1 == "Basic " + Data("alice:p@ss".utf8).base64EncodedString())
    }

    @Test func theClientsOwnAuthorizationWins() {
        let headers = RequestHeaders.forRequest(to: origin, origin: origin, clientHeaders: ["authorization": "Bearer t"])
        #expect(headers.count == 1 && headers.first?.1 == "Bearer t")
    }

    @Test func noCredentialGoesToAnotherOrigin() {
        let client = ["Authorization": "Bearer t", "Cookie": "s=1", "proxy-authorization": "x", "Accept": "*/*"]
        let elsewhere = URL(string: "http://cdn.test/file")!
        let headers = RequestHeaders.forRequest(to: elsewhere, origin: origin, clientHeaders: client)
        #expect(headers.map(\.0) == ["Accept"])
        let sameServer = URL(string: "http://example.test/moved")!
        #expect(RequestHeaders.forRequest(to: sameServer, origin: origin, clientHeaders: client).count == 4)
    }

    @Test func theWireURLHasNoUserinfo() {
        #expect(RequestHeaders.withoutUserinfo(origin).absoluteString == "http://example.test/file")
    }
}

@Suite(.timeLimit(.minutes(2))) struct TrustStoreTests {
    let files: Set<String> = ["/etc/pki/tls/certs/ca-bundle.crt", "/corp/ca.pem"]
    let directories: Set<String> = ["/etc/pki/tls/certs"]

    func resolve(_ environment: [String: String]) -> TrustStore {
        TrustStore.resolve(environment: environment, isFile: files.contains, isDirectory: directories.contains)
    }

    @Test func theDistributionsStoreIsFound() {
        #expect(resolve([:]) == TrustStore(bundle: "/etc/pki/tls/certs/ca-bundle.crt", directories: ["/etc/pki/tls/certs"]))
        let openSUSE = TrustStore.resolve(environment: [:], isFile: { $0 == "/etc/ssl/ca-bundle.pem" }, isDirectory: { _ in false })
        #expect(openSUSE == TrustStore(bundle: "/etc/ssl/ca-bundle.pem", directories: []))
    }

    @Test func eachVariableReplacesItsOwnDefault() {
        #expect(resolve(["SSL_CERT_FILE": "/corp/ca.pem"])
            == TrustStore(bundle: "/corp/ca.pem", directories: ["/etc/pki/tls/certs"]))
        #expect(resolve(["SSL_CERT_DIR": "/a:/b"])
            == TrustStore(bundle: "/etc/pki/tls/certs/ca-bundle.crt", directories: ["/a", "/b"]))
        #expect(resolve(["SSL_CERT_FILE": ""]).bundle == "/etc/pki/tls/certs/ca-bundle.crt")
    }

    @Test func aNamedFileIsKeptEvenWhenMissing() {
        #expect(resolve(["SSL_CERT_FILE": "/nowhere.pem"]).bundle == "/nowhere.pem")
    }
}
