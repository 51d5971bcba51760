#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The certificates hauld trusts for https: the system's CA store wherever the distribution keeps it, or what
/// `SSL_CERT_FILE` and `SSL_CERT_DIR` name, as OpenSSL (and so curl) reads them: each variable replaces its own
/// default, so a corporate CA in `SSL_CERT_FILE` is trusted beside the system's certificate directory.
package struct TrustStore: Sendable, Equatable, CustomStringConvertible {
    /// A PEM file of CA certificates.
    package var bundle: String?
    /// Directories of hashed CA certificates (`c_rehash`), searched when a chain needs them.
    package var directories: [String]

    package init(bundle: String?, directories: [String]) {
        self.bundle = bundle
        self.directories = directories
    }

    /// CA bundles, the first that exists wins.
    package static let bundleSearchPaths = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Arch, Alpine, Gentoo
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL, CentOS
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // Fedora, RHEL (what the one above links to)
        "/etc/ssl/ca-bundle.pem",  // openSUSE, SLES
        "/var/lib/ca-certificates/ca-bundle.pem",  // openSUSE (what the one above links to)
        "/etc/ca-certificates/extracted/tls-ca-bundle.pem",  // Arch (p11-kit's extract)
        "/etc/ssl/cert.pem",  // Alpine, macOS-style layouts
    ]

    /// Certificate directories, the first that exists wins.
    package static let directorySearchPaths = [
        "/etc/ssl/certs",  // Debian, Ubuntu, Arch, openSUSE, Alpine
        "/etc/pki/tls/certs",  // Fedora, RHEL
    ]

    /// The store for `environment`, looking at the file system through `isFile`/`isDirectory`.
    package static func resolve(
        environment: [String: String],
        isFile: (String) -> Bool = Self.isFile,
        isDirectory: (String) -> Bool = Self.isDirectory
    ) -> TrustStore {
        // Named files are kept even when missing: the TLS set-up then fails with a message naming them, instead of
        // quietly trusting something else.
        let bundle = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? bundleSearchPaths.first(where: isFile)
        let named = environment["SSL_CERT_DIR"].map { $0.split(separator: ":").map(String.init) } ?? []
        let directories = named.isEmpty ? directorySearchPaths.first(where: isDirectory).map { [$0] } ?? [] : named
        return TrustStore(bundle: bundle, directories: directories)
    }

    package var description: String {
        let parts = (bundle.map { ["the CA bundle \($0)"] } ?? []) + directories.map { "the certificates in \($0)" }
        return parts.isEmpty ? "no CA certificates (https cannot be verified)" : parts.joined(separator: " and ")
    }

    package static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
