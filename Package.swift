// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Haul",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "hauld", targets: ["hauld"]),
        .executable(name: "haul", targets: ["haul"]),
        .executable(name: "haul-browser-host", targets: ["haul-browser-host"]),
        .library(name: "DBusKit", targets: ["DBusKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CDBus",
            pkgConfig: "dbus-1",
            providers: [.apt(["libdbus-1-dev"])]
        ),
        // SHA-256 from the system's libgcrypt: swift-crypto would compile a second copy of BoringSSL (swift-nio-ssl
        // has one, 406 C files; swift-crypto's is 366 more) into every first build.
        .systemLibrary(
            name: "CGcrypt",
            pkgConfig: "libgcrypt",
            providers: [.apt(["libgcrypt20-dev"])]
        ),
        // glibc's malloc_trim (an idle hauld gives freed memory back), sync_file_range (downloads' write-out), and
        // epoll and eventfd (a bus connection's thread).
        .systemLibrary(name: "CGlibcExtras"),
        .target(name: "DBusKit", dependencies: ["CDBus", "CGlibcExtras"]),
        // The D-Bus contract (dbus/org.haul.Haul1.xml) as Swift: names, members, options, defaults, snapshots.
        .target(name: "HaulContract", dependencies: ["DBusKit"]),
        .target(name: "HaulCore", dependencies: ["CGlibcExtras"]),
        // The shape every service shares: the ordered outbox and the injected clock.
        .target(name: "ServiceKit"),
        .target(
            name: "HaulTransfer",
            dependencies: [
                "CGcrypt", "CGlibcExtras", "HaulCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // The desktop bridge (KDE job views, tray icon, notifications): a client of the contract only, which reads the
        // user's files with HaulCore's `RegularFile`.
        .target(
            name: "HaulDesktop",
            dependencies: [
                "DBusKit", "HaulContract", "HaulCore", "ServiceKit", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HaulService",
            dependencies: [
                "CGlibcExtras", "DBusKit", "HaulContract", "HaulCore", "HaulDesktop", "HaulTransfer", "ServiceKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "hauld",
            dependencies: [
                "HaulService", "HaulCore", "HaulDesktop",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "haul",
            dependencies: [
                "DBusKit", "HaulContract",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),
        // The browsers' native-messaging host org.haul.haul (docs/browser.md): a program of its own, small and
        // without Foundation, since a browser starts it for every message.
        .executableTarget(name: "haul-browser-host", dependencies: ["DBusKit", "HaulContract"]),
        .target(name: "HaulTestSupport", dependencies: ["DBusKit", "HaulContract", "HaulCore", "ServiceKit"]),
        // `make bench`: hauld beside curl on a loopback server; figures in Benchmarks/RESULTS.md.
        .executableTarget(
            name: "haul-bench",
            dependencies: [
                "CDBus", "DBusKit", "HaulContract", "HaulTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/HaulBench"
        ),
        .testTarget(name: "DBusKitTests", dependencies: ["DBusKit", "HaulTestSupport"]),
        // `haul` run as a user would, against hauld on a private bus.
        .testTarget(name: "HaulCLITests", dependencies: ["DBusKit", "HaulContract", "HaulTestSupport"]),
        .testTarget(name: "HaulCoreTests", dependencies: ["HaulCore", "HaulTestSupport"]),
        .testTarget(name: "ServiceKitTests", dependencies: ["ServiceKit"]),
        // Against the real desktops and browsers (Plasma, GNOME Shell, Chromium, Firefox): `make test` runs these
        // after every other suite, one at a time.
        .testTarget(name: "HostTests", dependencies: ["DBusKit", "HaulContract", "HaulTestSupport"]),
        .testTarget(
            name: "HaulDesktopTests",
            dependencies: [
                "HaulDesktop", "HaulContract", "DBusKit", "HaulTestSupport", "ServiceKit",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "HaulServiceTests",
            dependencies: [
                "HaulService", "HaulContract", "HaulCore", "HaulDesktop", "HaulTransfer", "DBusKit", "HaulTestSupport",
                "ServiceKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The transfer client in-process against the test server, without hauld.
        .testTarget(
            name: "HaulTransferTests",
            dependencies: [
                "HaulTransfer", "HaulCore", "HaulTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The test HTTP server itself (scripts/test-http-server), checked with curl.
        .testTarget(name: "TestServerTests", dependencies: ["HaulTestSupport"]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
