import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// Hostile arguments against every member hauld exports, found by introspection so that new members are covered
/// too: wrong and edge-case types and arity, deep variants, huge and odd strings, hostile URLs, paths and options,
/// property writes, missing objects and racing task commands. Seeded, so every run sends the same calls. Every call
/// must be answered with success or a documented error name, and hauld must survive each batch (`HostileCaller`).
/// Tasks that get created point at loopback ports where nothing listens, and write only inside a temporary folder.
@Suite(.serialized, .timeLimit(.minutes(3))) struct HostileArgumentTests {
    static let manager = HaulBus.managerInterface
    static let task = HaulBus.taskInterface
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    static let invalidArgument = HaulErrorName.invalidArgument.fullName

    /// hauld (quiet: its log is not read while it runs), a caller and the hostile values for a fresh folder.
    static func with(_ body: (HostileCaller, HostileValues) async throws -> Void) async throws {
        try await DaemonFixture.with(arguments: ["--log-level", "critical"]) { daemon throws in
            let folder = daemon.bus.directory.appendingPathComponent("hostile")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try await body(HostileCaller(daemon: daemon), try HostileValues(folder: folder.path))
        }
    }

    static func manager(_ method: ManagerMethod, _ body: [DBusValue]) -> DBusMessage {
        HostileCaller.call(HaulBus.managerPath, manager, method.rawValue, body)
    }

    /// A task object, suspended until resumed: `start-suspended` to a loopback port where nothing listens.
    static func suspendedTask(_ caller: HostileCaller, _ values: HostileValues, name: String) async throws -> ObjectPath
    {
        try await caller.daemon.calls.download(
            "http://127.0.0.1:1/f", to: values.folder + "/" + name, options: [.startSuspended: .boolean(true)]
        )
    }

    // MARK: Every member

    /// Every method of every object (tasks included), with the right signature and hostile values, one argument
    /// short, one too many, random types, deep nesting, and without an interface.
    @Test func everyExportedMethodSurvivesHostileArguments() async throws {
        try await Self.with { caller, values in
            _ = try await Self.suspendedTask(caller, values, name: "a")
            let done = try await Self.suspendedTask(caller, values, name: "b")
            try await caller.send([HostileCaller.call(done, Self.task, TaskMethod.cancel.rawValue)])
            let objects = try await Self.introspect(caller.daemon.client)
            let methods = objects.flatMap { path, interfaces in
                interfaces.flatMap { interface in interface.methods.map { (path, interface, $0) } }
            }
            let exported = Set(methods.map { "\($0.1.name).\($0.2.name)" })
            for expected in [
                "\(HaulBus.managerInterface).\(ManagerMethod.downloadWithOptions.rawValue)",
                "\(HaulBus.taskInterface).\(TaskMethod.forget.rawValue)",
                "\(HaulBus.indicatorInterface).\(IndicatorMethod.incrementActivityCount.rawValue)",
                "org.freedesktop.DBus.Properties.Set", "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
            ] {
                #expect(exported.contains(expected), "introspection did not find \(expected)")
            }
            var fuzzer = ValueFuzzer(random: SplitMix64(seed: 11), strings: HostileValues.strings)
            var calls: [DBusMessage] = []
            for (path, interface, method) in methods {
                var variants: [[DBusValue]] = (0..<6).map { _ in method.inputs.map { fuzzer.argument($0, values) } }
                if !method.inputs.isEmpty { variants.append(Array(variants[0].dropLast())) }
                variants.append(variants[0] + [fuzzer.value()])
                variants += (0..<3).map { _ in
                    (0..<Int.random(in: 0...3, using: &fuzzer.random)).map { _ in fuzzer.value() }
                }
                variants += [[fuzzer.deepVariant()], [fuzzer.deepArray(), fuzzer.deepStructure()]]
                if !method.inputs.isEmpty {
                    // The right signature with the deepest value the bus allows in place of the last argument.
                    variants.append(Array(variants[0].dropLast()) + [fuzzer.deepVariant()])
                }
                calls += variants.map { HostileCaller.call(path, interface.name, method.name, $0) }
                calls.append(HostileCaller.call(path, nil, method.name, variants[0]))
            }
            calls.append(Self.manager(.download, [.string(HostileValues.huge), .string(values.folder + "/huge")]))
            calls.append(Self.manager(.upload, [.string("http://127.0.0.1:1/"), .string(HostileValues.huge)]))
            #expect(calls.count > 400 && calls.count < 3000)
            let replies = try await caller.send(calls)
            #expect(replies.count == calls.count)
            #expect(replies.contains { $0.errorName == Self.invalidArgs }, "wrong signatures are InvalidArgs")
            #expect(replies.contains { $0.errorName == nil })
            _ = try await caller.send([Self.manager(.cancelAll, [])])
        }
    }

    // MARK: URLs and paths

    @Test func hostileURLsGetNamedErrors() async throws {
        try await Self.with { caller, values in
            let suspended = DBusValue.vardict(DownloadOption.values([.startSuspended: .boolean(true)]))
            for url in HostileValues.loopbackURLs {
                #expect(HostileValues.staysOnLoopback(url), "\(url) must stay on loopback")
            }
            // Downloads and uploads that may start, and every URL (strays too) held suspended; each download to a
            // file of its own, so that none is refused for another's destination.
            var calls = HostileValues.loopbackURLs.enumerated().flatMap { index, url in
                [
                    Self.manager(.download, [.string(url), .string(values.folder + "/u\(index)")]),
                    Self.manager(.upload, [.string(url), .string(values.uploadFile)]),
                ]
            }
            calls += (HostileValues.loopbackURLs + HostileValues.strayURLs).enumerated().map { index, url in
                Self.manager(.downloadWithOptions, [.string(url), .string(values.folder + "/s\(index)"), suspended])
            }
            // One at a time: a stray URL's task is cancelled before anything could resume it.
            for call in calls {
                let reply = try await caller.send([call]).first
                let url = call.body.first?.stringValue ?? ""
                let held = call.member == ManagerMethod.downloadWithOptions.rawValue
                if reply?.errorName == nil, !HostileValues.staysOnLoopback(url) || held {
                    try await cancelNewest(caller)
                }
            }
            let expectations: [(String, String)] = [
                ("http://127.0.0.1:65536/", Self.invalidArgument), ("http://127.0.0.1:99999/", Self.invalidArgument),
                ("http://127.0.0.1:4294967296/", Self.invalidArgument),
                ("https://127.0.0.1:99999/", Self.invalidArgument),
                ("http://[::1]:70000/", Self.invalidArgument), ("http://127.0.0.1:0/", Self.invalidArgument),
                ("http:///path", Self.invalidArgument), ("ftp://127.0.0.1/", HaulErrorName.unsupportedScheme.fullName),
                ("javascript:alert(1)", HaulErrorName.unsupportedScheme.fullName),
            ]
            for (index, (url, expected)) in expectations.enumerated() {
                let reply = try await caller.send([
                    Self.manager(
                        .downloadWithOptions, [.string(url), .string(values.folder + "/e\(index)"), suspended])
                ])
                #expect(reply.first?.errorName == expected, "\(url)")
            }
            _ = try await caller.send([Self.manager(.cancelAll, [])])
        }
    }

    /// The newest task (the one just created) is cancelled, so that nothing can start it later.
    private func cancelNewest(_ caller: HostileCaller) async throws {
        let tasks = try await caller.daemon.calls.call(.listTasks)
        let newest = try #require(
            tasks.first?.arrayValue?.compactMap(\.objectPathValue).max { Self.id($0) < Self.id($1) })
        try await caller.send([HostileCaller.call(newest, Self.task, TaskMethod.cancel.rawValue)])
    }

    static func id(_ path: ObjectPath) -> UInt32 { UInt32(path.rawValue.split(separator: "/").last ?? "") ?? 0 }

    @Test func hostilePathsGetNamedErrors() async throws {
        try await Self.with { caller, values in
            let url = DBusValue.string("http://127.0.0.1:1/")
            var calls = values.destinations.map { Self.manager(.download, [url, .string($0)]) }
            calls += HostileValues.existingFiles.map { Self.manager(.download, [url, .string($0)]) }
            calls += values.sources.map { Self.manager(.upload, [url, .string($0)]) }
            try await caller.send(calls)
            let expectations: [(ManagerMethod, [DBusValue], String)] = [
                (.download, [url, .string("relative")], Self.invalidArgument),
                (.download, [url, .string(values.folder + "/nonexistent/d")], HaulErrorName.notFound.fullName),
                (.download, [url, .string("/proc/self/status")], HaulErrorName.fileExists.fullName),
                (.download, [url, .string(values.folder + "/nonexistent/")], HaulErrorName.notFound.fullName),
                (.download, [url, .string(values.uploadFile + "/")], Self.invalidArgument),
                (.upload, [url, .string("/dev/zero")], Self.invalidArgument),
                (.upload, [url, .string("/nonexistent-haul-file")], HaulErrorName.notFound.fullName),
            ]
            for (method, body, expected) in expectations {
                let reply = try await caller.send([Self.manager(method, body)])
                #expect(reply.first?.errorName == expected, "\(method.rawValue) \(body)")
            }
            let outside = try FileManager.default.contentsOfDirectory(atPath: values.folder + "/..")
            #expect(
                Set(outside).isSubset(of: ["hostile", "bus", "bus.conf", "state"]), "nothing written beside the folder")
            _ = try await caller.send([Self.manager(.cancelAll, [])])
        }
    }

    // MARK: Options

    @Test func hostileOptionsGetNamedErrors() async throws {
        try await Self.with { caller, values in
            let url = DBusValue.string("http://127.0.0.1:1/")
            var fuzzer = ValueFuzzer(random: SplitMix64(seed: 23), strings: HostileValues.strings)
            var calls: [DBusMessage] = []
            for (index, options) in HostileValues.optionMaps.enumerated() {
                let destination = DBusValue.string(values.folder + "/o\(index)")
                calls.append(Self.manager(.downloadWithOptions, [url, destination, .vardict(options)]))
                calls.append(Self.manager(.uploadWithOptions, [url, .string(values.uploadFile), .vardict(options)]))
            }
            // Random maps: known and unknown keys, values of any type.
            let keys = [DownloadOption.headers, .sha256, .overwrite, .startSuspended, .maxRetries].map(\.rawValue)
                + [UploadOption.method.rawValue, "x", ""]
            for index in 0..<200 {
                var options: [String: DBusValue] = [:]
                for _ in 0..<Int.random(in: 0...4, using: &fuzzer.random) {
                    options[fuzzer.pick(keys)] = fuzzer.value()
                }
                let destination = DBusValue.string(values.folder + "/r\(index)")
                calls.append(Self.manager(.downloadWithOptions, [url, destination, .vardict(options)]))
                calls.append(Self.manager(.uploadWithOptions, [url, .string(values.uploadFile), .vardict(options)]))
            }
            // The same key twice.
            let twice = DBusValue.dictionary(
                key: .string, value: .variant,
                [
                    DBusDictEntry(.string(DownloadOption.overwrite.rawValue), .variant(.boolean(true))),
                    DBusDictEntry(.string(DownloadOption.overwrite.rawValue), .variant(.boolean(false))),
                ]
            )
            calls.append(Self.manager(.downloadWithOptions, [url, .string(values.folder + "/twice"), twice]))
            try await caller.send(calls)

            let download = HostileValues.download
            for options: [String: DBusValue] in [
                download(.maxRetries, .int32(-1)), download(.maxRetries, .double(.nan)),
                download(.overwrite, .variant(.boolean(true))),
                download(.headers, .stringDictionary(["X-A": "a\r\nInjected: 1"])),
                download(.headers, .stringDictionary(["": "x"])),
                ["delay": .double(.infinity)], download(.sha256, .string(String(repeating: "g", count: 64))),
                download(.headers, .stringDictionary(["X-Long": String(repeating: "v", count: 8190)])),
                download(
                    .headers, .stringDictionary(Dictionary(uniqueKeysWithValues: (0..<101).map { ("X-\($0)", "") }))
                ),
                download(
                    .headers,
                    .stringDictionary(
                        Dictionary(
                            uniqueKeysWithValues: (0..<5).map { ("X-\($0)", String(repeating: "w", count: 7000)) })
                    )
                ),
            ] {
                let reply = try await caller.send([
                    Self.manager(.downloadWithOptions, [url, .string(values.folder + "/x"), .vardict(options)])
                ])
                #expect(reply.first?.errorName == Self.invalidArgument, "\(options)")
            }
            _ = try await caller.send([Self.manager(.cancelAll, [])])
        }
    }

    /// Header options that pass validation but fight the HTTP stack (framing, hosts, ranges, upgrades, the largest
    /// allowed, non-ASCII values) reach a real server in downloads and uploads: every task ends, hauld survives.
    /// (A 64 KiB header, since refused, crashed hauld here: see `TransferOptionsDecoder`.)
    @Test func validButHostileHeadersReachARealServer() async throws {
        let server = try await TestHTTPServer()
        defer { server.stop() }
        try await Self.with { caller, values in
            let headerMaps: [[String: String]] = [
                ["Host": ""], ["Host": "example.invalid:99999"], ["Content-Length": "-1"],
                ["Content-Length": "99999999999999999999"], ["Transfer-Encoding": "chunked"],
                ["Transfer-Encoding": "gzip, chunked"], ["Connection": "close, upgrade"], ["Upgrade": "h2c"],
                ["Expect": "100-continue"], ["TE": "trailers"], ["Range": "bytes=99999999999999999999-"],
                ["Range": "bytes=5-1"], ["If-Range": "\"x\""], ["Accept-Encoding": "gzip"],
                ["Authorization": "Basic !!!"],
                ["X-Long": String(repeating: "v", count: 8180)], ["X-A": "ünïcødé \u{202E}"],
                ["Keep-Alive": "timeout=-1"],
                ["Cookie": ";;;;"], ["Content-Type": "multipart/form-data; boundary="],
                ["Proxy-Connection": "keep-alive"],
                ["content-length": "1", "Content-Length": "2"],
                Dictionary(uniqueKeysWithValues: (0..<4).map { ("X-\($0)", String(repeating: "w", count: 8000)) }),
                Dictionary(uniqueKeysWithValues: (0..<100).map { ("X-\($0)", "\($0)") }),
            ]
            var calls: [DBusMessage] = []
            for (index, headers) in headerMaps.enumerated() {
                let options = DBusValue.vardict(
                    DownloadOption.values([.headers: .stringDictionary(headers), .maxRetries: .uint32(0)])
                )
                calls.append(
                    Self.manager(
                        .downloadWithOptions,
                        [
                            .string(server.url("/gen/64k?seed=\(index)&id=h\(index)")),
                            .string(values.folder + "/h\(index)"), options,
                        ]))
                calls.append(
                    Self.manager(
                        .uploadWithOptions,
                        [
                            .string(server.url("/upload/h\(index)")), .string(values.uploadFile),
                            .vardict(UploadOption.values([.headers: .stringDictionary(headers)])),
                        ]))
            }
            let replies = try await caller.send(calls)
            #expect(replies.allSatisfy { $0.errorName == nil }, "\(replies.filter { $0.errorName != nil })")
            let tasks =
                try await caller.daemon.calls.call(.listTasks).first?.arrayValue?.compactMap(\.objectPathValue) ?? []
            #expect(tasks.count == calls.count)
            for task in tasks {
                try await waitUntil("\(task) to end", timeout: .seconds(30)) {
                    try await caller.daemon.calls.property(.state, of: task) == .state(.completed)
                }
            }
            try await caller.expectAlive()
        }
    }

    // MARK: Properties

    /// Get, GetAll and Set on every property found, with values of every type and hostile doubles; unknown
    /// interfaces and properties.
    @Test func propertiesRefuseHostileAccess() async throws {
        try await Self.with { caller, values in
            _ = try await Self.suspendedTask(caller, values, name: "p")
            let objects = try await Self.introspect(caller.daemon.client)
            var fuzzer = ValueFuzzer(random: SplitMix64(seed: 37), strings: HostileValues.strings)
            let properties = "org.freedesktop.DBus.Properties"
            let doubles: [Double] = [
                .nan, -.nan, .infinity, -.infinity, -1, -Double.leastNonzeroMagnitude, 60.000_000_1, 1e308,
                .greatestFiniteMagnitude,
            ]
            var calls: [DBusMessage] = []
            for (path, interfaces) in objects {
                for interface in interfaces {
                    calls.append(HostileCaller.call(path, properties, "GetAll", [.string(interface.name)]))
                    for property in interface.properties {
                        let name = DBusValue.string(property.name)
                        calls.append(HostileCaller.call(path, properties, "Get", [.string(interface.name), name]))
                        var writes = (0..<4).map { _ in fuzzer.value() } + doubles.map(DBusValue.double)
                        // Set wraps the value in one more variant: the deepest the bus allows in all.
                        writes += [
                            fuzzer.deepVariant(ValueFuzzer.deepest - 1), fuzzer.deepArray(), .variant(.double(1)),
                        ]
                        calls += writes.map {
                            HostileCaller.call(path, properties, "Set", [.string(interface.name), name, .variant($0)])
                        }
                        for odd in ["", HaulBus.name + ".Nope", String(repeating: "i", count: 100_000), "\u{202E}"] {
                            calls.append(HostileCaller.call(path, properties, "Get", [.string(odd), name]))
                            calls.append(
                                HostileCaller.call(path, properties, "Set", [.string(odd), name, .variant(.double(1))]))
                        }
                    }
                    for odd in HostileValues.strings + [IndicatorProperty.visible.name + " ", "visible"] {
                        calls.append(
                            HostileCaller.call(path, properties, "Get", [.string(interface.name), .string(odd)]))
                        calls.append(
                            HostileCaller.call(
                                path, properties, "Set",
                                [.string(interface.name), .string(odd), .variant(.boolean(true))]))
                    }
                }
                calls.append(HostileCaller.call(path, properties, "GetAll", [.string(HaulBus.name + ".Nope")]))
            }
            try await caller.send(calls)
            #expect(try await caller.daemon.indicatorProperty(.activationDelay).doubleValue?.isFinite == true)

            let indicator = HaulBus.indicatorInterface
            func set(_ name: String, _ value: DBusValue) -> DBusMessage {
                HostileCaller.call(
                    HaulBus.managerPath, properties, "Set", [.string(indicator), .string(name), .variant(value)])
            }
            func set(_ property: IndicatorProperty, _ value: DBusValue) -> DBusMessage { set(property.name, value) }
            // Known answers, after which the delay written first is still there.
            _ = try await caller.send([set(.activationDelay, .double(2.5))])
            let expectations: [(DBusMessage, String)] = [
                (set(.activationDelay, .double(.nan)), Self.invalidArgs),
                (set(.activationDelay, .double(-.infinity)), Self.invalidArgs),
                (set(.completionDelay, .double(1e308)), Self.invalidArgs),
                (set(.completionDelay, .double(-1)), Self.invalidArgs),
                (set(.activationDelay, .uint32(1)), Self.invalidArgs),
                (set(.activationDelay, .variant(.double(1))), Self.invalidArgs),
                (set(.visible, .boolean(true)), "org.freedesktop.DBus.Error.PropertyReadOnly"),
                (set("Nope", .boolean(true)), "org.freedesktop.DBus.Error.UnknownProperty"),
                (
                    HostileCaller.call(
                        HaulBus.managerPath, properties, "Get",
                        [.string("org.haul.Nope"), .string(IndicatorProperty.state.name)]),
                    "org.freedesktop.DBus.Error.UnknownInterface"
                ),
            ]
            for (call, expected) in expectations {
                let reply = try await caller.send([call])
                #expect(reply.first?.errorName == expected, "\(reply.first?.call ?? "")")
            }
            #expect(try await caller.daemon.indicatorProperty(.activationDelay) == .double(2.5))
        }
    }

    // MARK: Tasks

    /// Calls to task objects that never existed, and Cancel, Forget, Suspend and Resume racing on the same tasks.
    @Test func taskCommandsRaceAndMissingTasksAreUnknown() async throws {
        try await Self.with { caller, values in
            let folder = HaulBus.tasksPath
            let missing: [ObjectPath] = [
                HaulBus.taskPath(0), HaulBus.taskPath(.max), folder.appending("99999999999") ?? folder, folder,
                HaulBus.taskPath(1).appending("x") ?? folder, "/org/haul/Haul2", "/",
            ]
            var calls = missing.flatMap { path in
                TaskMethod.allCases.map { HostileCaller.call(path, Self.task, $0.rawValue) }
            }
            calls.append(
                HostileCaller.call(
                    HaulBus.taskPath(.max), "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.task)]))
            let replies = try await caller.send(calls)
            #expect(
                replies.allSatisfy { $0.errorName == "org.freedesktop.DBus.Error.UnknownObject" },
                "\(replies.map(\.errorName))")

            var fuzzer = ValueFuzzer(random: SplitMix64(seed: 41), strings: HostileValues.strings)
            for round in 0..<6 {
                var tasks: [ObjectPath] = []
                for index in 0..<8 {
                    tasks.append(try await Self.suspendedTask(caller, values, name: "race\(round)-\(index)"))
                }
                var race: [DBusMessage] = []
                for _ in 0..<120 {
                    let method = fuzzer.pick([TaskMethod.cancel, .forget, .suspend, .resume, .forget, .cancel])
                    race.append(HostileCaller.call(fuzzer.pick(tasks), Self.task, method.rawValue))
                }
                race += [Self.manager(.cancelAll, []), Self.manager(.suspendAll, [])]
                race += tasks.map {
                    HostileCaller.call($0, "org.freedesktop.DBus.Properties", "GetAll", [.string(Self.task)])
                }
                try await caller.send(race.shuffled(using: &fuzzer.random), concurrency: 64)
                // Whatever the order, every task ends cancelled (once its attempt has stopped) and forgettable.
                _ = try await caller.send([Self.manager(.cancelAll, [])])
                for task in tasks {
                    try await waitUntil("\(task) to complete after CancelAll", timeout: .seconds(20)) {
                        let state = try? await caller.daemon.calls.property(.state, of: task)
                        return state == nil || state == .state(.completed)
                    }
                }
                let forgets = try await caller.send(
                    tasks.map { HostileCaller.call($0, Self.task, TaskMethod.forget.rawValue) }
                )
                #expect(
                    forgets.allSatisfy {
                        $0.errorName == nil || $0.errorName == "org.freedesktop.DBus.Error.UnknownObject"
                    })
            }
            let left = try await caller.daemon.calls.call(.listTasks)
            #expect(left == [.array(.objectPath, [])], "every raced task was forgotten")
        }
    }

    // MARK: Introspection

    /// Every object below `/` with its interfaces.
    static func introspect(_ client: DBusConnection) async throws -> [(ObjectPath, [IntrospectionMembers.Interface])] {
        var found: [(ObjectPath, [IntrospectionMembers.Interface])] = []
        var pending: [ObjectPath] = [.root]
        while let path = pending.popLast() {
            let xml =
                try await client.call(
                    destination: HaulBus.name, path: path, interface: "org.freedesktop.DBus.Introspectable",
                    member: "Introspect"
                ).first?.stringValue ?? ""
            found.append((path, try IntrospectionMembers.interfaces(xml)))
            pending += try IntrospectionMembers.children(xml).compactMap { path.appending($0) }
        }
        return found
    }
}

extension ValueFuzzer {
    /// A value for a declared argument: hostile but meaningful strings for the arguments whose names say what they
    /// hold, option maps for `a{sv}`, anything of the right type otherwise.
    mutating func argument(_ argument: IntrospectionMembers.Interface.Argument, _ values: HostileValues) -> DBusValue {
        guard let type = try? DBusType(signature: argument.type) else { return value() }
        switch (argument.name, type) {
        case ("url", .string): return .string(pick(HostileValues.loopbackURLs))
        case ("destination", .string): return .string(pick(values.destinations))
        case ("source", .string): return .string(pick(values.sources))
        case ("interface_name", .string):
            return .string(
                pick([HaulBus.managerInterface, HaulBus.indicatorInterface, HaulBus.taskInterface, "", "x.y"]))
        case ("property_name", .string):
            let indicator = [IndicatorProperty.enabled, .activationDelay, .visible, .state].map(\.name)
            return .string(pick(indicator + [TaskProperty.id.name, TaskProperty.errorMessage.name, "", "nope"]))
        case ("options", .dictionary(.string, .variant)): return .vardict(pick(HostileValues.optionMaps))
        default: return value(of: type)
        }
    }
}
