import HaulCore
import Testing

/// What counts as loopback for the network rules: judged on the URL's host, as the contract says.
@Suite("Loopback hosts")
struct LoopbackHostTests {
    @Test(arguments: [
        "localhost", "LOCALHOST", "LocalHost", "127.0.0.1", "127.0.0.0", "127.255.255.255", "127.1.2.3", "::1",
        "[::1]", "0:0:0:0:0:0:0:1", "0000:0000:0000:0000:0000:0000:0000:0001", "::0:1",
    ])
    func loopback(_ host: String) {
        #expect(LoopbackHost.contains(host))
    }

    @Test(arguments: [
        "", "localhost.", "localhost.localdomain", "sub.localhost", "xlocalhost", "128.0.0.1", "126.255.255.255",
        "10.0.0.1", "192.168.1.10", "0.0.0.0", "127.1", "127.0.0.256", "127.0.0.1.", "2130706433", "0x7f.0.0.1",
        "::", "::2", "::ffff:127.0.0.1", "fe80::1", "[::1", "::1]", "127.0.0.1\u{0}.example.com", "loca\u{0}lhost",
        "example.com", "127.0.0.1.example.com",
    ])
    func notLoopback(_ host: String) {
        #expect(!LoopbackHost.contains(host))
    }

    @Test(arguments: [
        ("http://localhost:8080/file", true), ("https://127.0.0.1/x", true), ("http://[::1]:9000/", true),
        ("http://user:secret@127.0.0.5/", true), ("http://LOCALHOST/", true), ("http://example.com/", false),
        ("http://192.168.0.2/", false), ("http://[fe80::1]/", false), ("http://127.0.0.1.nip.io/", false),
    ])
    func transferURLs(_ string: String, _ expected: Bool) throws {
        #expect(try TransferURL(string).isLoopback == expected)
    }
}
