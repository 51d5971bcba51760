import DBusKit
import Foundation
import HaulContract
import HaulService
import HaulTestSupport
import Testing

/// Sends hostile calls to hauld in concurrent batches and holds it to the contract: every call is answered, with
/// success or an error whose name the contract documents (never `NoReply`, `Failed`, a disconnection or silence),
/// and after every batch hauld still runs and answers.
struct HostileCaller {
    let daemon: DaemonFixture

    /// The reply to one call: nil for success, else the error's name.
    struct Reply: Sendable {
        var call: String
        var errorName: String?
        var errorMessage: String
    }

    /// What a call may be answered with, besides success.
    static let documentedErrors: Set<String> =
        Set(
            [
                "InvalidArgs", "UnknownMethod", "UnknownObject", "UnknownInterface", "UnknownProperty",
                "PropertyReadOnly",
            ]
            .map { "org.freedesktop.DBus.Error.\($0)" }
        ).union(HaulErrorName.allCases.map(\.fullName))

    /// A call to hauld; `interface` nil sends none (the member alone picks it).
    static func call(
        _ path: ObjectPath, _ interface: String?, _ member: String, _ body: [DBusValue] = []
    ) -> DBusMessage {
        .methodCall(destination: HaulBus.name, path: path, interface: interface, member: member, body: body)
    }

    /// Sends every call, at most `concurrency` at a time, checks each reply and then that hauld is alive. Returns the
    /// replies in the calls' order.
    @discardableResult
    func send(_ calls: [DBusMessage], concurrency: Int = 24) async throws -> [Reply] {
        for call in calls {
            for value in call.body { try value.validate() }  // a test's own mistake must not pass for hauld's answer
        }
        var replies = [Reply?](repeating: nil, count: calls.count)
        var start = 0
        while start < calls.count {
            let range = start..<min(start + concurrency, calls.count)
            try await withThrowingTaskGroup(of: (Int, Reply).self) { group in
                for index in range {
                    group.addTask { (index, await reply(to: calls[index])) }
                }
                for try await (index, reply) in group { replies[index] = reply }
            }
            start = range.upperBound
        }
        let answered = replies.compactMap { $0 }
        for reply in answered {
            if let name = reply.errorName {
                let documented = Self.documentedErrors.contains(name)
                #expect(documented, "\(reply.call) got \(name): \(reply.errorMessage.prefix(300))")
            }
        }
        try await expectAlive()
        return answered
    }

    /// hauld runs, owns its name and answers a method and a property.
    func expectAlive() async throws {
        guard daemon.hauld.running.isRunning else {
            let output = await daemon.hauld.stop()
            // The runtime's message and the crashed thread's backtrace come first in a crash report.
            let report =
                output.stderr.range(of: "Fatal error").map { output.stderr[$0.lowerBound...] }
                ?? output.stderr.suffix(3000)
            Issue.record("hauld died (status \(output.status)): \(report.prefix(6000))")
            throw TestSupportError("hauld died")
        }
        let tasks = try await daemon.calls.call(.listTasks, timeout: .seconds(20))
        #expect(tasks.first?.arrayValue != nil)
        #expect(try await daemon.indicatorProperty(.state).stringValue != nil)
    }

    private func reply(to message: DBusMessage) async -> Reply {
        let description = Self.describe(message)
        do {
            _ = try await daemon.client.call(message, timeout: .seconds(20))
            return Reply(call: description, errorName: nil, errorMessage: "")
        } catch let error as DBusError {
            return Reply(call: description, errorName: error.name, errorMessage: error.message)
        } catch {
            return Reply(call: description, errorName: "(not a D-Bus error)", errorMessage: "\(error)")
        }
    }

    /// A call, short enough for a test log.
    static func describe(_ message: DBusMessage) -> String {
        let body = message.body.map { String(describing: $0).prefix(80) }.joined(separator: ", ")
        return
            "\(message.path?.rawValue ?? "?") \(message.interface ?? "-").\(message.member ?? "?")(\(body.prefix(400)))"
    }
}
