import CDBus
import DBusKit
import Foundation
import HaulTestSupport
import Synchronization

/// What a `GetManagedObjects` of hauld's size costs on this machine without hauld and without the bench's decoding:
/// libdbus at both ends, dbus-daemon between.
///
/// A client that only receives (libdbus checks the reply, nothing decodes it) times the call twice: to hauld, and to
/// a replayer that answers with hauld's own reply, captured once, by copying it (no encoding, no check of its own).
/// Even the replayed call crosses libdbus three times, one after another, as each needs the whole message first:
/// the replayer's write, dbus-daemon's read, check and forward, the client's read and check. Against the decoded
/// figure, the first says what the bench's decoding adds; against the first, the second says what hauld adds (its
/// encoding, and libdbus loading and writing the reply in hauld).
///
/// The libdbus calls block, so each side runs on a thread of its own, and every connection lives and dies on the
/// thread that opened it.
enum ManagedObjectsFloor {
    struct Figures: Sendable {
        /// Median of `rounds`, hauld answering, the reply not decoded.
        var undecoded: Double
        /// Median of `rounds`, the replayer answering with hauld's reply.
        var replayed: Double
        /// The reply's size.
        var bytes: Int
    }

    private static let objectManager = StandardInterfaces.objectManager.name
    private static let member = "GetManagedObjects"
    private static let timeoutMilliseconds: Int32 = 60_000

    /// Captures the reply of `service` at `path`, then times `rounds` calls to it and `rounds` to the replayer.
    static func measure(address: String, service: String, path: String, rounds: Int) async throws -> Figures {
        let hauld = try await onThread { () throws(TestSupportError) -> (times: [Double], reply: [UInt8]) in
            try Client(address: address).times(service: service, path: path, rounds: rounds, capturing: true)
        }
        let replayer = try await Replayer.start(address: address, reply: hauld.reply)
        let replayed: Result<[Double], TestSupportError>
        do throws(TestSupportError) {
            replayed = .success(try await onThread { () throws(TestSupportError) -> [Double] in
                try Client(address: address).times(service: replayer.name, path: path, rounds: rounds).times
            })
        } catch {
            replayed = .failure(error)
        }
        await replayer.stop()
        return Figures(
            undecoded: Statistics.median(hauld.times), replayed: Statistics.median(try replayed.get()),
            bytes: hauld.reply.count
        )
    }

    /// Runs `body` on a thread of its own.
    private static func onThread<T: Sendable>(
        _ body: @escaping @Sendable () throws(TestSupportError) -> T
    ) async throws(TestSupportError) -> T {
        typealias Outcome = Result<T, TestSupportError>
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            Thread {
                continuation.resume(returning: Result { () throws(TestSupportError) -> T in try body() })
            }.start()
        }
        return try result.get()
    }

    /// A private connection to the bus, registered, used only on the thread that opened it.
    private final class Connection {
        let handle: OpaquePointer

        init(address: String) throws(TestSupportError) {
            var error = CDBus.DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            guard let handle = dbus_connection_open_private(address, &error) else {
                throw TestSupportError("cannot connect to \(address): \(Self.message(error))")
            }
            dbus_connection_set_exit_on_disconnect(handle, 0)
            guard dbus_bus_register(handle, &error) != 0 else {
                dbus_connection_close(handle)
                dbus_connection_unref(handle)
                throw TestSupportError("cannot register on the bus: \(Self.message(error))")
            }
            self.handle = handle
        }

        deinit {
            dbus_connection_close(handle)
            dbus_connection_unref(handle)
        }

        var uniqueName: String { dbus_bus_get_unique_name(handle).map { String(cString: $0) } ?? "" }

        static func message(_ error: CDBus.DBusError) -> String {
            error.message.map { String(cString: $0) } ?? "unknown error"
        }
    }

    /// Calls and receives, decoding nothing.
    private struct Client {
        let connection: Connection

        init(address: String) throws(TestSupportError) {
            connection = try Connection(address: address)
        }

        /// The milliseconds of each of `rounds` calls and, if `capturing`, the last reply's bytes.
        func times(
            service: String, path: String, rounds: Int, capturing: Bool = false
        ) throws(TestSupportError) -> (times: [Double], reply: [UInt8]) {
            var times: [Double] = []
            var captured: [UInt8] = []
            for round in 0..<rounds {
                guard let call = dbus_message_new_method_call(service, path, objectManager, member) else {
                    throw TestSupportError("cannot make a call to \(service)")
                }
                defer { dbus_message_unref(call) }
                var error = CDBus.DBusError()
                dbus_error_init(&error)
                defer { dbus_error_free(&error) }
                let start = ContinuousClock.now
                let reply = dbus_connection_send_with_reply_and_block(
                    connection.handle, call, timeoutMilliseconds, &error
                )
                times.append(start.duration(to: .now).milliseconds)
                guard let reply else {
                    throw TestSupportError("\(service) did not answer: \(Connection.message(error))")
                }
                defer { dbus_message_unref(reply) }
                if capturing && round == rounds - 1 { captured = try Self.bytes(of: reply) }
            }
            return (times, captured)
        }

        private static func bytes(of message: OpaquePointer) throws(TestSupportError) -> [UInt8] {
            var buffer: UnsafeMutablePointer<CChar>?
            var length: Int32 = 0
            guard dbus_message_marshal(message, &buffer, &length) != 0, let buffer else {
                throw TestSupportError("cannot marshal the reply")
            }
            defer { dbus_free(buffer) }
            return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                Array(UnsafeBufferPointer(start: $0, count: Int(length)))
            }
        }
    }

    /// Answers every `GetManagedObjects` with a copy of one reply, until stopped.
    private final class Replayer: Sendable {
        /// Its unique name on the bus.
        let name: String
        private let shared: Shared

        private init(name: String, shared: Shared) {
            self.name = name
            self.shared = shared
        }

        static func start(address: String, reply: [UInt8]) async throws(TestSupportError) -> Replayer {
            let shared = Shared()
            typealias Outcome = Result<String, TestSupportError>
            let ready = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                Thread {
                    do throws(TestSupportError) {
                        let connection = try Connection(address: address)
                        let template = try template(from: reply)
                        defer { dbus_message_unref(template) }
                        continuation.resume(returning: .success(connection.uniqueName))
                        serve(connection, template, until: shared)
                    } catch {
                        continuation.resume(returning: .failure(error))
                    }
                    shared.stopped.signal()
                }.start()
            }
            return Replayer(name: try ready.get(), shared: shared)
        }

        /// Returns once its thread has closed the connection (within one 50 ms turn of its loop).
        func stop() async {
            shared.stopping.store(true, ordering: .relaxed)
            let shared = shared
            _ = try? await onThread { () throws(TestSupportError) in shared.stopped.wait() }
        }

        /// What the replayer's thread and its owner share.
        private final class Shared: Sendable {
            let stopping = Atomic<Bool>(false)
            let stopped = DispatchSemaphore(value: 0)
        }

        private static func template(from bytes: [UInt8]) throws(TestSupportError) -> OpaquePointer {
            var error = CDBus.DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            let message = bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    dbus_message_demarshal($0.baseAddress, Int32($0.count), &error)
                }
            }
            guard let message else { throw TestSupportError("cannot load the reply: \(Connection.message(error))") }
            return message
        }

        private static func serve(_ connection: Connection, _ template: OpaquePointer, until shared: Shared) {
            var serial: UInt32 = 0
            while !shared.stopping.load(ordering: .relaxed) {
                guard dbus_connection_read_write(connection.handle, 50) != 0 else { return }
                while let call = dbus_connection_pop_message(connection.handle) {
                    defer { dbus_message_unref(call) }
                    guard dbus_message_is_method_call(call, objectManager, member) != 0,
                        let reply = dbus_message_copy(template)
                    else { continue }
                    serial += 1
                    dbus_message_set_serial(reply, serial)
                    dbus_message_set_reply_serial(reply, dbus_message_get_serial(call))
                    dbus_message_set_destination(reply, dbus_message_get_sender(call))
                    dbus_connection_send(connection.handle, reply, nil)
                    dbus_message_unref(reply)
                    dbus_connection_flush(connection.handle)
                }
            }
        }
    }
}
