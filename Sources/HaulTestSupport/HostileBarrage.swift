package import DBusKit
import Foundation
import HaulContract

/// About 6,500 hostile calls, as a fuzzing client sends them: wrong types and arity, huge strings and deep variants,
/// hostile URLs, paths and options, and a burst of parallel calls. Seeded, so every run sends the same calls.
///
/// For measuring what such a client leaves in hauld's memory (`MemoryAfterAbuseTests`, the bench's `abuse` phase),
/// not for checking the answers (`HostileArgumentTests` does). It never changes a setting (no property write has the
/// right type), every URL it sends has a loopback host where nothing listens (or none at all), every task it creates
/// writes only inside `folder`, and ``send(on:)`` cancels and forgets them all at the end.
package struct HostileBarrage: Sendable {
    package struct Group: Sendable {
        package let name: String
        package let calls: [DBusMessage]
        /// Calls in flight at once.
        package let concurrency: Int
    }

    package let groups: [Group]
    package var callCount: Int { groups.reduce(0) { $0 + $1.calls.count } }

    /// A string larger than anything sane, well within the bus's message limit.
    static let huge = String(repeating: "h", count: 4 << 20)
    static let large = [String(repeating: "a", count: 65_536), String(repeating: "é", count: 10_000)]
    static let odd = [
        "", " ", "\t\r\n", "\u{1}\u{7}\u{1B}[31m\u{7F}", "\u{202E}txt.exe", "e\u{301}\u{302}", "%00%ff%", "%s%n",
        "../../../../etc/passwd", "/", "..", "$(id)`id`", "<?xml?>", "𝒽𝒶𝓊𝓁",
    ]
    /// Where nothing listens: below the ephemeral range, so no test server can be there.
    static let nowhere = "http://127.0.0.1:1/"

    /// Calls whose tasks (if any) write inside `folder`, which must exist; `uploadFile` is a small file in it.
    package init(folder: String, uploadFile: String) {
        // No descriptors: the barrage holds its thousands of calls at once, and a bus limits the descriptors in flight.
        var fuzzer = ValueFuzzer(random: SplitMix64(seed: 7), strings: Self.odd + Self.large, fileDescriptors: false)
        let manager = HaulBus.managerPath
        let task = HaulBus.taskPath(1)
        let suspended = DBusValue.vardict(DownloadOption.values([.startSuspended: .boolean(true)]))
        func call(_ path: ObjectPath, _ interface: String?, _ member: String, _ body: [DBusValue]) -> DBusMessage {
            .methodCall(destination: HaulBus.name, path: path, interface: interface, member: member, body: body)
        }
        func managerCall(_ method: ManagerMethod, _ body: [DBusValue]) -> DBusMessage {
            call(manager, HaulBus.managerInterface, method.rawValue, body)
        }
        // Every method of the contract, on the objects that have it.
        var methods: [(ObjectPath, String, DBusInterfaceDescription.Method)] = []
        for interface in HaulInterfaces.all {
            for method in interface.methods {
                methods.append((interface.name == HaulBus.taskInterface ? task : manager, interface.name, method))
            }
        }
        let reads = [("Get", [DBusType.string, .string]), ("GetAll", [.string])]

        // Wrong types and arity, for every method and the Properties reads.
        var wrong: [DBusMessage] = []
        for _ in 0..<70 {
            for (path, interface, method) in methods {
                let values = (0..<Int.random(in: 0...3, using: &fuzzer.random)).map { _ in fuzzer.value() }
                wrong.append(call(path, interface, method.name, values))
            }
            for (member, _) in reads {
                let values = (0..<Int.random(in: 0...3, using: &fuzzer.random)).map { _ in fuzzer.value() }
                wrong.append(call(manager, "org.freedesktop.DBus.Properties", member, values))
            }
        }

        // Huge strings and deep variants in place of each argument.
        var huge: [DBusMessage] = []
        for index in 0..<16 {
            huge.append(managerCall(.download, [.string(Self.huge), .string(folder + "/huge\(index)")]))
            huge.append(managerCall(.upload, [.string(Self.nowhere), .string(Self.huge)]))
        }
        for _ in 0..<8 {
            for (path, interface, method) in methods where !method.inputs.isEmpty {
                let base = method.inputs.map { fuzzer.value(of: $0.type) }
                for position in base.indices {
                    for string in Self.large where method.inputs[position].type == .string {
                        var body = base
                        body[position] = .string(string)
                        huge.append(call(path, interface, method.name, body))
                    }
                }
                huge.append(call(path, interface, method.name, Array(base.dropLast()) + [fuzzer.deepVariant()]))
                huge.append(call(path, interface, method.name, [fuzzer.deepArray(), fuzzer.deepStructure()]))
            }
            let longName = String(repeating: "i", count: 100_000)
            huge.append(call(manager, "org.freedesktop.DBus.Properties", "Get", [.string(longName), .string("x")]))
            huge.append(
                call(manager, "org.freedesktop.DBus.Properties", "Set", [
                    .string(HaulBus.managerInterface), .string(ManagerProperty.maxRunningTasks.rawValue),
                    .variant(fuzzer.deepVariant(62)),
                ]))
            huge.append(
                managerCall(.downloadWithOptions, [
                    .string(Self.nowhere), .string(folder + "/key"),
                    .vardict([String(repeating: "k", count: 100_000): .boolean(true)]),
                ]))
        }

        // Hostile URLs, on loopback only: each a download held suspended, a download that may start, an upload.
        let long = String(repeating: "a/", count: 20_000)
        var urlStrings = [
            "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:99999/", "http://127.0.0.1:-1/",
            "http://127.0.0.1:4294967297/", "http://127.0.0.1:" + String(repeating: "9", count: 400) + "/",
            "https://127.0.0.1:65536/", "http://[::1]:70000/", "http://[::1/", "http://[::1]]:1/", "http://127.0.0.1::1/",
            "http://127.0.0.1:1/" + long, "http://127.0.0.1:1/?" + long, "http://127.0.0.1:1/#" + long,
            "http://user:pass@127.0.0.1:1/", "http://%75ser@127.0.0.1:1/", "http://127.0.0.1:1/%00", "http:///path",
            "http://", "http:", "ftp://127.0.0.1/", "file:///etc/passwd", "javascript:alert(1)", "//127.0.0.1:1/",
        ]
        urlStrings += Self.odd.map { Self.nowhere + $0 } + Self.odd
        var urls: [DBusMessage] = []
        for round in 0..<4 {
            for (index, url) in urlStrings.enumerated() {
                let destination = DBusValue.string(folder + "/u\(round)-\(index)")
                urls.append(managerCall(.downloadWithOptions, [.string(url), destination, suspended]))
                urls.append(managerCall(.download, [.string(url), .string(folder + "/d\(round)-\(index)")]))
                urls.append(managerCall(.upload, [.string(url), .string(uploadFile)]))
            }
        }

        // Hostile paths, inside the folder or never writable.
        var paths: [DBusMessage] = []
        let destinations = [
            "relative", "./x", "../x", "", "/", "//", folder, folder + "/", folder + "/./b", folder + "//c",
            folder + "/nonexistent/d", folder + "/" + String(repeating: "n", count: 256),
            folder + "/" + String(repeating: "d/", count: 3000) + "x", folder + "/new\nline", folder + "/x.haul-partial",
            "/proc/self/status", "/dev/null", "/proc/self/fd", folder + "/upload.bin/x",
        ] + Self.odd.map { folder + "/" + $0 }
        for _ in 0..<4 {
            for destination in destinations {
                paths.append(managerCall(.downloadWithOptions, [.string(Self.nowhere), .string(destination), suspended]))
                paths.append(managerCall(.upload, [.string(Self.nowhere), .string(destination)]))
            }
        }

        // Option maps: wrong types, unknown and huge keys, header maps far too large.
        var options: [DBusMessage] = []
        let keys = DownloadOption.allCases.map(\.rawValue) + [UploadOption.method.rawValue, "x", ""]
        let headerMaps: [[String: String]] = [
            ["X-A": "a\r\nInjected: 1"], ["": "x"], ["X-A": String(repeating: "v", count: 65_536)],
            Dictionary(uniqueKeysWithValues: (0..<2000).map { ("X-\($0)", "\($0)") }),
        ]
        for index in 0..<400 {
            var map: [String: DBusValue] = [DownloadOption.startSuspended.rawValue: .boolean(true)]
            for _ in 0..<Int.random(in: 0...4, using: &fuzzer.random) { map[fuzzer.pick(keys)] = fuzzer.value() }
            if index.isMultiple(of: 10) {
                map[DownloadOption.headers.rawValue] = .stringDictionary(headerMaps[index / 10 % headerMaps.count])
            }
            options.append(
                managerCall(.downloadWithOptions, [.string(Self.nowhere), .string(folder + "/o\(index)"), .vardict(map)]))
            options.append(
                managerCall(.uploadWithOptions, [.string(Self.nowhere), .string(uploadFile), .vardict(map)]))
        }

        // A burst of parallel reads.
        var burst: [DBusMessage] = []
        for index in 0..<3000 {
            switch index % 5 {
            case 0: burst.append(managerCall(.listTasks, []))
            case 1: burst.append(call(HaulBus.rootPath, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", []))
            case 2:
                burst.append(
                    call(manager, "org.freedesktop.DBus.Properties", "GetAll", [.string(HaulBus.managerInterface)]))
            case 3: burst.append(call(manager, "org.freedesktop.DBus.Introspectable", "Introspect", []))
            default:
                burst.append(
                    call(HaulBus.taskPath(UInt32(index % 40)), "org.freedesktop.DBus.Properties", "GetAll",
                        [.string(HaulBus.taskInterface)]))
            }
        }

        groups = [
            Group(name: "wrong types", calls: wrong, concurrency: 24),
            Group(name: "huge strings and deep variants", calls: huge, concurrency: 24),
            Group(name: "URLs", calls: urls, concurrency: 24),
            Group(name: "paths", calls: paths, concurrency: 24),
            Group(name: "options", calls: options, concurrency: 24),
            Group(name: "burst", calls: burst, concurrency: 256),
        ]
    }

    /// Sends every group in turn on `connection` (a caller's own, which it closes afterwards: the indicator's holds
    /// it took go with it), then cancels and forgets every task. Answers are not checked: errors are expected.
    package func send(on connection: DBusConnection) async throws {
        for group in groups {
            var start = 0
            while start < group.calls.count {
                let batch = group.calls[start..<min(start + group.concurrency, group.calls.count)]
                await withTaskGroup(of: Void.self) { tasks in
                    for message in batch {
                        tasks.addTask { _ = try? await connection.call(message, timeout: .seconds(60)) }
                    }
                }
                start += batch.count
            }
        }
        try await forgetEveryTask(on: connection)
    }

    /// Cancels every task and forgets it.
    package static func forgetEveryTask(on connection: DBusConnection) async throws {
        _ = try await connection.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: ManagerMethod.cancelAll.rawValue
        )
        let listed = try await connection.call(
            destination: HaulBus.name, path: HaulBus.managerPath, interface: HaulBus.managerInterface,
            member: ManagerMethod.listTasks.rawValue
        )
        for path in listed.first?.arrayValue?.compactMap(\.objectPathValue) ?? [] {
            _ = try? await connection.call(
                destination: HaulBus.name, path: path, interface: HaulBus.taskInterface,
                member: TaskMethod.forget.rawValue
            )
        }
    }

    private func forgetEveryTask(on connection: DBusConnection) async throws {
        try await Self.forgetEveryTask(on: connection)
    }
}
