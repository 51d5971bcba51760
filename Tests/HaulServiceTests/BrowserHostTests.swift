import DBusKit
import Foundation
import HaulContract
import HaulTestSupport
import Testing

/// The browsers' native-messaging host, `haul-browser-host`, run as a browser runs it: frames on its standard input,
/// answers on its standard output, against hauld on a private bus or none.
@Suite(.timeLimit(.minutes(3))) struct BrowserHostTests {
    /// One native-messaging frame: the length in the machine's byte order, then the bytes.
    static func frame(_ body: some Collection<UInt8>) -> Data {
        var length = UInt32(body.count)
        return Data(bytes: &length, count: 4) + Data(body)
    }

    static func frame(_ json: String) -> Data { frame(Array(json.utf8)) }

    /// The host's answers, in order, and whatever bytes follow the last whole frame.
    static func answers(_ output: Data) -> (answers: [[String: Any]], rest: Data) {
        var answers: [[String: Any]] = []
        var rest = output[...]
        while rest.count >= 4 {
            let length = rest.prefix(4).withUnsafeBytes { Int($0.loadUnaligned(as: UInt32.self)) }
            guard rest.count >= 4 + length else { break }
            let body = rest.dropFirst(4).prefix(length)
            let answer = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
            answers.append(answer ?? ["unparsed": true])
            rest = rest.dropFirst(4 + length)
        }
        return (answers, Data(rest))
    }

    /// Runs the host on `input`, on `bus` or with a bus address that leads nowhere.
    func host(_ input: Data, bus: PrivateBus? = nil) async throws -> (answers: [[String: Any]], stderr: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus?.address ?? "unix:path=/nonexistent/haul-test-bus"
        let host = Command.built("haul-browser-host")
        let result = try await Command.run(host, [], environment: environment, bytes: input)
        #expect(result.status == 0, "exit status \(result.status)")
        let (answers, rest) = Self.answers(result.stdoutBytes)
        #expect(rest.isEmpty, "\(rest.count) bytes after the last whole answer")
        return (answers, result.stderr)
    }

    func error(_ answer: [String: Any]) -> String? {
        (answer["ok"] as? Bool) == false ? answer["error"] as? String : nil
    }

    @Test func noInputNoAnswer() async throws {
        let (answers, stderr) = try await host(Data())
        #expect(answers.isEmpty)
        #expect(stderr.isEmpty)
    }

    /// Each malformed message gets its error answer, and the host goes on with the next.
    @Test func malformedMessagesAreAnsweredOneByOne() async throws {
        let messages: [Data] = [
            Self.frame(""), Self.frame("{"), Self.frame("[]"), Self.frame("42"), Self.frame("null"),
            Self.frame(#"{"url": "https://example.org/"}"#), Self.frame(#"{"type": 7}"#),
            Self.frame(#"{"type": "format-disk"}"#), Self.frame(#"{"type": "download"}"#),
            Self.frame(#"{"type": "download", "url": ""}"#), Self.frame(#"{"type": "download", "url": 1}"#),
            Self.frame(#"{"type": "start"}"#), Self.frame(#"{"type": "start", "task": "/etc/passwd"}"#),
            Self.frame(#"{"type": "withdraw", "task": "not a path"}"#),
            Self.frame(#"{"type": "withdraw", "task": "\#(HaulBus.tasksPath.rawValue)/1/../2"}"#),
            Self.frame([0xFF, 0xFE, 0x7B, 0x7D]), Self.frame([0x7B, 0x00, 0x7D]),
            Self.frame(String(repeating: "[", count: 100_000)),
            Self.frame(#"{"type": "download", "url": "\u0000"#),
        ]
        let (answers, stderr) = try await host(messages.reduce(Data(), +))
        #expect(answers.count == messages.count)
        for (index, answer) in answers.enumerated() {
            #expect(error(answer) == "org.haul.haul.Malformed", "message \(index): \(answer)")
        }
        #expect(stderr.isEmpty)
    }

    /// Random bytes in well-formed frames: an answer for each, never a crash.
    @Test func randomMessagesNeverCrashTheHost() async throws {
        var generator = SystemRandomNumberGenerator()
        let messages = (0..<300).map { _ in
            Self.frame((0..<Int.random(in: 0...512, using: &generator)).map { _ in UInt8.random(in: 0...255) })
        }
        let (answers, _) = try await host(messages.reduce(Data(), +))
        #expect(answers.count == messages.count)
        #expect(answers.allSatisfy { error($0) == "org.haul.haul.Malformed" })
    }

    @Test func inputThatEndsInsideAFrameIsTruncated() async throws {
        for input in [Data([0x10, 0x00]), Self.frame("{}").prefix(5), Self.frame(#"{"type": "start"}"#).dropLast()] {
            let (answers, _) = try await host(Data(input))
            #expect(answers.count == 1)
            #expect(answers.first.flatMap(error) == "org.haul.haul.Truncated", "\(answers)")
        }
    }

    /// A frame announcing more than 1 MiB is refused without reading it: the host answers and ends.
    @Test func oversizedFramesAreRefusedUnread() async throws {
        for length in [UInt32(1 << 20) + 1, UInt32.max] {
            var header = length
            let (answers, _) = try await host(Data(bytes: &header, count: 4) + Data("{}".utf8))
            #expect(answers.count == 1)
            #expect(answers.first.flatMap(error) == "org.haul.haul.Oversized", "\(answers)")
        }
        let (answers, _) = try await host(Self.frame(Array(repeating: UInt8(ascii: " "), count: 1 << 20)))
        #expect(answers.first.flatMap(error) == "org.haul.haul.Malformed", "exactly 1 MiB is read, and is not JSON")
    }

    /// Without a bus or without hauld the host says so at once: the browser then downloads the file itself.
    @Test func withoutHauldTheAnswerIsAnError() async throws {
        let offer = Self.frame(#"{"type": "download", "url": "https://example.org/a", "cookies": "session=c00kie"}"#)
        let (noBus, _) = try await host(offer)
        #expect(noBus.count == 1 && noBus.first?["ok"] as? Bool == false, "\(noBus)")
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let (answers, stderr) = try await host(offer, bus: bus)
        #expect(answers.first.flatMap(error) == "org.freedesktop.DBus.Error.ServiceUnknown", "\(answers)")
        #expect(stderr.isEmpty)
        #expect(!"\(noBus) \(answers)".contains("c00kie"))
    }

    /// A hauld that owns its name but never answers (stopped by SIGSTOP) costs a message an error answer within the
    /// host's deadline, never a host that hangs: the browser then downloads the file itself.
    @Test func aHauldThatNeverAnswersIsATimeout() async throws {
        try await DaemonFixture.with { fixture in
            kill(fixture.hauld.pid, SIGSTOP)
            defer { kill(fixture.hauld.pid, SIGCONT) }
            let offer = #"{"type": "download", "url": "https://example.org/a", "cookies": "session=c00kie"}"#
            let (answers, stderr) = try await host(Self.frame(offer) + Self.frame(offer), bus: fixture.bus)
            // The call's timeout (1.5 s) usually ends it, and the host reads the next message; on a loaded machine
            // the host's deadline for the whole message (1.8 s) may come first, and the host ends.
            let errors = answers.map(error)
            #expect(!errors.isEmpty && (errors.count == 2 || errors.last == "org.haul.haul.Timeout"), "\(answers)")
            #expect(errors.allSatisfy { $0 == "org.freedesktop.DBus.Error.NoReply" || $0 == "org.haul.haul.Timeout" })
            #expect(!"\(answers)".contains("c00kie") && stderr.isEmpty)
        }
    }

    /// hauld's refusal reaches the browser as the host's answer, and the cookies stay out of it.
    @Test func aRefusalNeverQuotesTheCookies() async throws {
        try await DaemonFixture.with { fixture in
            let offer = Self.frame(
                #"{"type": "download", "url": "ftp://example.org/a", "cookies": "session=c00kie\r\nX-Evil: 1"}"#
            )
            let (answers, stderr) = try await host(offer, bus: fixture.bus)
            #expect(answers.count == 1)
            #expect(answers.first?["ok"] as? Bool == false, "\(answers)")
            #expect(!"\(answers)".contains("c00kie") && !stderr.contains("c00kie"))
        }
    }

    /// `download` creates a suspended task into the download folder with the browser's headers and name; `start`
    /// runs it; the server sees the cookie, the referrer and the user agent. `withdraw` removes a task.
    @Test func theHostCreatesStartsAndWithdrawsTasks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-host-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let www = directory.appendingPathComponent("www")
        let home = directory.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: www, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent("Downloads"), withIntermediateDirectories: true
        )
        let content = Data((0..<100_000).map { _ in UInt8.random(in: 0...255) })
        try content.write(to: www.appendingPathComponent("data.bin"))
        let site = try await BrowserTestSite(root: www, secret: "c00kie")
        defer { site.stop() }
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path]
        try await DaemonFixture.with(environment: environment) { fixture in
            let offer = """
                {"type": "download", "url": "\(site.url("/files/data.bin"))", "referrer": "\(site.url("/page"))", \
                "filename": "hint.bin", "cookies": "session=c00kie", "userAgent": "HaulTest/1.0", "totalBytes": 100000}
                """
            let (created, _) = try await host(Self.frame(offer), bus: fixture.bus)
            let answer = try #require(created.first)
            #expect(answer["ok"] as? Bool == true, "\(answer)")
            #expect(!"\(answer)".contains("c00kie"))
            let task = try #require((answer["task"] as? String).flatMap { ObjectPath($0) })
            #expect(HaulBus.taskID(of: task) != nil)
            #expect(answer["path"] as? String == home.appendingPathComponent("Downloads").path)
            let suspended = try await snapshot(task, fixture)
            #expect(suspended.isSuspended)
            #expect(try await site.fileRequests().isEmpty, "nothing is fetched before start")
            // The suspended task's record keeps the headers, for a resume after a restart.
            let record = fixture.hauld.stateDirectory.appendingPathComponent("haul/tasks/\(suspended.id).json")
            #expect(try String(contentsOf: record, encoding: .utf8).contains("session=c00kie"))

            let (started, _) = try await host(
                Self.frame(#"{"type": "start", "task": "\#(task.rawValue)"}"#), bus: fixture.bus
            )
            #expect(started.first?["ok"] as? Bool == true, "\(started)")
            try await waitUntil("the task to complete", timeout: .seconds(30)) {
                try await snapshot(task, fixture).isCompleted
            }
            let done = try await snapshot(task, fixture)
            #expect(done.errorName == "", "\(done.errorMessage)")
            #expect(done.path == home.appendingPathComponent("Downloads/Report data.bin").path)
            #expect(FileManager.default.contents(atPath: done.path) == content)
            let requests = try await site.fileRequests()
            #expect(requests.count == 1)
            #expect(requests.first?.cookie == true && requests.first?.referer == site.url("/page"))
            #expect(requests.first?.userAgent == "HaulTest/1.0")
            // The completed task's record keeps no header: the cookie is gone from the disk.
            var text = ""
            try await waitUntil("the completed record", seen: { text }) {
                text = (try? String(contentsOf: record, encoding: .utf8)) ?? ""
                return text.contains("completed") && !text.contains("c00kie")
            }

            let (again, _) = try await host(Self.frame(offer), bus: fixture.bus)
            let second = try #require((again.first?["task"] as? String).flatMap { ObjectPath($0) })
            let (withdrawn, _) = try await host(
                Self.frame(#"{"type": "withdraw", "task": "\#(second.rawValue)"}"#), bus: fixture.bus
            )
            #expect(withdrawn.first?["ok"] as? Bool == true, "\(withdrawn)")
            let tasks = try await fixture.calls.call(.listTasks).first?.arrayValue ?? []
            #expect(tasks.compactMap(\.objectPathValue) == [task])
        }
    }

    func snapshot(_ task: ObjectPath, _ fixture: DaemonFixture) async throws -> TaskSnapshot {
        TaskSnapshot(properties: try await fixture.calls.properties(of: task))
    }
}
