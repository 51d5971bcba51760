import Foundation
import HaulCore
import Testing

@Suite("Proxy settings", .timeLimit(.minutes(2)))
struct ProxySettingsTests {
    let plain = URL(string: "http://files.example.test/a.iso")!
    let secure = URL(string: "https://files.example.test/a.iso")!

    @Test func noVariablesMeansDirect() {
        let settings = ProxySettings(environment: ["PATH": "/usr/bin"])
        #expect(settings.route(for: plain) == .direct)
        #expect(settings.route(for: secure) == .direct)
        #expect(settings.summary.isEmpty)
    }

    @Test func eachSchemeHasItsVariable() {
        let settings = ProxySettings(environment: [
            "http_proxy": "http://plain.proxy.test:3128", "https_proxy": "secure.proxy.test:8080",
        ])
        #expect(settings.route(for: plain) == .proxy(ProxyServer(kind: .http, host: "plain.proxy.test", port: 3128)))
        #expect(settings.route(for: secure) == .proxy(ProxyServer(kind: .http, host: "secure.proxy.test", port: 8080)))
    }

    /// `HTTP_PROXY` can come from a request's `Proxy:` header in CGI programs ("httpoxy"); curl ignores it too.
    @Test func upperCaseHTTPProxyIsIgnoredButUpperCaseHTTPSProxyIsRead() {
        let settings = ProxySettings(environment: ["HTTP_PROXY": "evil.test:1", "HTTPS_PROXY": "good.test:2"])
        #expect(settings.route(for: plain) == .direct)
        #expect(settings.route(for: secure) == .proxy(ProxyServer(kind: .http, host: "good.test", port: 2)))
    }

    @Test func lowerCaseWinsAndEmptyCountsAsUnset() {
        let settings = ProxySettings(environment: [
            "https_proxy": "lower.test:1", "HTTPS_PROXY": "upper.test:2", "http_proxy": " ", "ALL_PROXY": "all.test:3",
        ])
        #expect(settings.route(for: secure) == .proxy(ProxyServer(kind: .http, host: "lower.test", port: 1)))
        #expect(settings.route(for: plain) == .proxy(ProxyServer(kind: .http, host: "all.test", port: 3)))
    }

    @Test func proxyURLsAreParsedAsCurlDoes() throws {
        func parse(_ text: String) throws -> ProxyServer { try ProxyServer(parsing: text, variable: "http_proxy") }
        #expect(try parse("proxy.test") == ProxyServer(kind: .http, host: "proxy.test", port: 1080))
        #expect(try parse("http://[::1]:3128/") == ProxyServer(kind: .http, host: "::1", port: 3128))
        #expect(try parse("socks5h://127.0.0.1:9050") == ProxyServer(kind: .socks5, host: "127.0.0.1", port: 9050))
        #expect(try parse("socks5://s.test") == ProxyServer(kind: .socks5, host: "s.test", port: 1080))
        let withUser = try parse("http://alice:p%40ss@proxy.test:3128")
        #expect(withUser.username == "alice" && withUser.password == "p@ss")
        #expect(withUser.description == "http://alice@proxy.test:3128", "the password is never shown")
        for bad in ["https://proxy.test", "ftp://proxy.test", "http://", "http://proxy.test:0", "proxy.test:99999",
                    "http://proxy.test/path", "socks5://u:p@s.test"] {
            #expect(throws: ProxyConfigurationError.self, "\(bad)") { try parse(bad) }
        }
    }

    /// A proxy that cannot be used fails the transfers it applies to, rather than letting them go around it.
    @Test func anUnusableProxyIsReportedNotSkipped() {
        let settings = ProxySettings(environment: ["https_proxy": "https://tls.proxy.test"])
        guard case .unusable(let error) = settings.route(for: secure) else {
            Issue.record("\(settings.route(for: secure))")
            return
        }
        #expect(error.variable == "https_proxy")
        #expect(settings.route(for: plain) == .direct)
        #expect(settings.summary == ["https transfers will fail: \(error)"])
    }

    @Test func noProxyMatchesDomainsAndTheirSubdomains() {
        let list = NoProxyList(" intranet.test, .corp.test ,*.lab.test\tLOCALHOST. ")
        for host in ["intranet.test", "www.intranet.test", "corp.test", "a.b.corp.test", "lab.test", "x.lab.test",
                     "localhost", "Intranet.Test."] {
            #expect(list.bypasses(host: host), "\(host)")
        }
        for host in ["myintranet.test", "intranet.test.evil", "test", "127.0.0.1"] {
            #expect(!list.bypasses(host: host), "\(host)")
        }
    }

    @Test func noProxyMatchesAddressesAndNetworks() {
        let list = NoProxyList("127.0.0.1,10.0.0.0/8,::1,[fd00::]/8,192.168.1.0/33,bad/8")
        for host in ["127.0.0.1", "10.1.2.3", "::1", "[::1]", "fd12::5"] {
            #expect(list.bypasses(host: host), "\(host)")
        }
        for host in ["127.0.0.2", "11.0.0.1", "::2", "fe80::1", "192.168.1.1", "localhost"] {
            #expect(!list.bypasses(host: host), "\(host)")
        }
    }

    @Test func aStarSendsEverythingDirect() {
        let settings = ProxySettings(environment: ["http_proxy": "p.test:1", "no_proxy": "*"])
        #expect(settings.route(for: plain) == .direct)
        #expect(NoProxyList("").isEmpty && !NoProxyList("*").isEmpty)
    }

    @Test func noProxyAppliesPerHost() {
        let settings = ProxySettings(environment: ["http_proxy": "p.test:1", "NO_PROXY": "example.test"])
        #expect(settings.route(for: plain) == .direct)
        #expect(settings.route(for: URL(string: "http://other.test/")!) == .proxy(ProxyServer(kind: .http, host: "p.test", port: 1)))
    }
}
