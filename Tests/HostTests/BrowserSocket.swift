import Foundation
import HaulTestSupport
import Synchronization

/// A WebSocket connection to a browser's remote protocol on 127.0.0.1: Chromium's DevTools protocol or Firefox's
/// WebDriver BiDi. Both send commands as `{"id", "method", "params"}` and answer with the same id; everything else
/// the browser sends is an event, kept in order for ``events(_:)``.
///
/// RFC 6455 as a client needs it, on a plain socket: the upgrade, masked text frames out, text frames (fragmented or
/// not), pings and the close in. A thread of its own reads, never the Swift concurrency pool.
final class BrowserSocket: Sendable {
    struct ProtocolError: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    private let state = Mutex(State())
    /// Whether the descriptor is still open: the reader thread closes it when the connection ends, and a write after
    /// that would go to whatever file reused the number. Writes and the close hold this lock.
    private let descriptorOpen = Mutex(true)

    private struct State {
        var nextID = 0
        var pending: [Int: CheckedContinuation<JSON, any Error>] = [:]
        var events: [JSON] = []
        var closed = false
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Connects to `ws://127.0.0.1:port/path` and runs `body` with the connection, which closes after it.
    static func with<T>(port: Int, path: String, _ body: (BrowserSocket) async throws -> T) async throws -> T {
        let socket = try BrowserSocket(descriptor: connect(port: port, path: path))
        Thread.detachNewThread { socket.read() }
        defer { socket.close() }
        return try await body(socket)
    }

    /// Sends a command and returns its result; a browser's error answer throws.
    @discardableResult
    func command(_ method: String, _ params: JSON = [:], session: String? = nil) async throws -> JSON {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        var message: [String: JSON] = ["id": .number(Double(id)), "method": .string(method), "params": params]
        if let session { message["sessionId"] = .string(session) }
        let text = JSON.object(message).data
        return try await withCheckedThrowingContinuation { continuation in
            let closed = state.withLock { state in
                if !state.closed { state.pending[id] = continuation }
                return state.closed
            }
            guard !closed else {
                return continuation.resume(throwing: ProtocolError(description: "the browser closed the connection"))
            }
            guard send(opcode: 0x1, text) else {
                let waiting = state.withLock { $0.pending.removeValue(forKey: id) }
                waiting?.resume(throwing: ProtocolError(description: "cannot send \(method) to the browser"))
                return
            }
        }
    }

    /// The events so far whose method is `method`, in order.
    func events(_ method: String) -> [JSON] {
        state.withLock { $0.events.filter { $0["method"].string == method } }
    }

    private func close() {
        _ = send(opcode: 0x8, Data())
        descriptorOpen.withLock { open in
            if open { shutdown(descriptor, Int32(SHUT_RDWR)) }
        }
    }

    /// Writes one masked frame (clients must mask); false when the socket is gone.
    private func send(opcode: UInt8, _ payload: Data) -> Bool {
        var frame = Data([0x80 | opcode])
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65536: frame.append(contentsOf: [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)])
        default:
            frame.append(0x80 | 127)
            frame.append(contentsOf: (0..<8).reversed().map { UInt8((UInt64(payload.count) >> ($0 * 8)) & 0xFF) })
        }
        let mask = (0..<4).map { _ in UInt8.random(in: 0...255) }
        frame.append(contentsOf: mask)
        frame.append(contentsOf: payload.enumerated().map { $0.element ^ mask[$0.offset % 4] })
        return descriptorOpen.withLock { open in open && Self.writeAll(descriptor, frame) }
    }

    /// The reader thread: frames until the connection ends, then the waiting commands learn that it has.
    private func read() {
        var message = Data()
        while let (opcode, fin, payload) = readFrame() {
            switch opcode {
            case 0x0, 0x1:
                message.append(payload)
                if fin {
                    receive(message)
                    message = Data()
                }
            case 0x9:
                _ = send(opcode: 0xA, payload)
            case 0x8:
                break
            default:
                continue
            }
            if opcode == 0x8 { break }
        }
        descriptorOpen.withLock { open in
            Glibc.close(descriptor)
            open = false
        }
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.pending = [:] }
            return Array(state.pending.values)
        }
        for continuation in waiting {
            continuation.resume(throwing: ProtocolError(description: "the browser closed the connection"))
        }
    }

    private func readFrame() -> (opcode: UInt8, fin: Bool, payload: Data)? {
        guard let head = readExactly(2) else { return nil }
        var length = UInt64(head[1] & 0x7F)
        if length == 126 {
            guard let bytes = readExactly(2) else { return nil }
            length = bytes.reduce(0) { $0 << 8 | UInt64($1) }
        } else if length == 127 {
            guard let bytes = readExactly(8) else { return nil }
            length = bytes.reduce(0) { $0 << 8 | UInt64($1) }
        }
        // A server never masks; a length beyond 64 MiB is no answer of a browser's.
        guard head[1] & 0x80 == 0, length <= 1 << 26, let payload = readExactly(Int(length)) else { return nil }
        return (head[0] & 0x0F, head[0] & 0x80 != 0, payload)
    }

    private func readExactly(_ count: Int) -> Data? {
        var data = Data(count: count)
        var filled = 0
        while filled < count {
            let result = data.withUnsafeMutableBytes {
                Glibc.read(descriptor, $0.baseAddress! + filled, count - filled)
            }
            if result > 0 {
                filled += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                return nil
            }
        }
        return data
    }

    private func receive(_ data: Data) {
        guard let message = try? JSON(parsing: data) else { return }
        guard let id = message["id"].int else {
            state.withLock { $0.events.append(message) }
            return
        }
        guard let continuation = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        // Chromium: {"error": {"message"}}; Firefox: {"type": "error", "error", "message"}.
        if !message["error"].isNull {
            let text = message["error"]["message"].string ?? message["message"].string ?? "\(message["error"])"
            continuation.resume(throwing: ProtocolError(description: text))
        } else {
            continuation.resume(returning: message["result"])
        }
    }

    /// A connected socket past the WebSocket upgrade. No Origin header: Firefox refuses a connection that sends one.
    private static func connect(port: Int, path: String) throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ProtocolError(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        let key = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n\r\n"
        guard connected, writeAll(descriptor, Data(request.utf8)) else {
            Glibc.close(descriptor)
            throw ProtocolError(description: "cannot connect to 127.0.0.1:\(port)")
        }
        // The answer's head, byte by byte: the first frame may follow it at once.
        var head = Data()
        var byte: UInt8 = 0
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
            guard Glibc.read(descriptor, &byte, 1) == 1, head.count < 16384 else {
                Glibc.close(descriptor)
                throw ProtocolError(description: "127.0.0.1:\(port)\(path) ended the WebSocket upgrade")
            }
            head.append(byte)
        }
        guard String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            Glibc.close(descriptor)
            throw ProtocolError(description: "127.0.0.1:\(port)\(path) refused the WebSocket upgrade")
        }
        return descriptor
    }

    private static func writeAll(_ descriptor: Int32, _ data: Data) -> Bool {
        var written = 0
        while written < data.count {
            let result = data.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + written, data.count - written, Int32(MSG_NOSIGNAL))
            }
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
