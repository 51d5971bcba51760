import CDBus
@testable import DBusKit
import HaulTestSupport
import Testing

/// The wire codec (`WireWriter`, `WireReader`) against libdbus's own iterators, which build and read the messages that
/// carry file descriptors: random bodies, seeded, must come out as the same bytes and read back as the same values.
@Suite struct WireFormatTests {
    static let strings = ["", "a", "héllo wörld — 日本語 🚀", String(repeating: "long ", count: 80)]

    @Test func randomBodiesGiveTheBytesLibdbusGivesAndReadBack() throws {
        var fuzzer = ValueFuzzer(random: SplitMix64(seed: 21), strings: Self.strings, fileDescriptors: false)
        for _ in 0..<3000 {
            let count = Int.random(in: 1...3, using: &fuzzer.random)
            let body = (0..<count).map { _ in fuzzer.value(depth: 4) }
            let message = DBusMessage.signal(path: "/a/b", interface: "org.example.Wire", member: "Sample", body: body)

            let marshalled = try Loaded(.marshalled(WireWriter.message(message)))
            let iterated = try Loaded(.withFileDescriptors(message))
            #expect(marshalled.bodyBytes == iterated.bodyBytes, "\(body)")

            // Read back (each by the other codec) and written again: the same bytes. Values are not compared, as a
            // NaN is not equal to itself.
            let readByWire = try #require(MessageCodec.decode(iterated.raw)?.body)
            let readByIterators = try #require(IteratorCodec.body(of: marshalled.raw))
            #expect(try Loaded(body: readByWire).bodyBytes == iterated.bodyBytes)
            #expect(try Loaded(body: readByIterators).bodyBytes == iterated.bodyBytes)
        }
    }

    @Test func decodedValuesEqualTheSentOnes() throws {
        let body: [DBusValue] = [
            .vardict(["count": .uint32(7), "nested": .variant(.variant(.strings(["x", ""])))]),
            .structure([.int16(-2), .double(0.25), .objectPath("/a/b_c"), .signature(try DBusSignature("a{sv}"))]),
            .array(.int64, [.int64(.min), .int64(.max)]), .boolean(true), .byte(255),
        ]
        let message = DBusMessage.signal(path: "/a", interface: "org.example.Wire", member: "Sample", body: body)
        let loaded = try Loaded(.marshalled(WireWriter.message(message)))
        #expect(MessageCodec.decode(loaded.raw)?.body == body)
    }

    /// What libdbus refuses to load is refused before it is sent: the bus would drop the connection that sent it.
    @Test func aMessageNestedTooDeepIsRefused() throws {
        var fuzzer = ValueFuzzer(random: SplitMix64(seed: 5), strings: Self.strings, fileDescriptors: false)
        let deepest = fuzzer.deepVariant()
        let accepted = DBusMessage.signal(path: "/a", interface: "org.example.Wire", member: "Deep", body: [deepest])
        _ = try Loaded(.marshalled(WireWriter.message(accepted)))
        let tooDeep = DBusMessage.signal(
            path: "/a", interface: "org.example.Wire", member: "Deep", body: [.variant(deepest)]
        )
        #expect(throws: DBusError.self) { try Loaded(.marshalled(WireWriter.message(tooDeep))) }
    }

    @Test func mismatchedAndInvalidValuesAreRefused() {
        let refused: [DBusValue] = [
            .array(.string, [.int32(1)]), .string("nul\0byte"), .structure([]),
            .dictionary(key: .string, value: .int32, [DBusDictEntry(.string("k"), .uint32(1))]),
            .variant(.array(.byte, [.boolean(true)])),
        ]
        for value in refused {
            let message = DBusMessage.signal(path: "/a", interface: "org.example.Wire", member: "Bad", body: [value])
            #expect(throws: DBusError.self, "\(value)") { try WireWriter.message(message) }
        }
    }

    /// The reader never traps, whatever the bytes: every byte of valid bodies is changed in turn, and the bodies cut
    /// short at every length.
    @Test func theReaderSurvivesDamagedBodies() throws {
        var fuzzer = ValueFuzzer(random: SplitMix64(seed: 8), strings: Self.strings, fileDescriptors: false)
        for _ in 0..<40 {
            let value = fuzzer.value(depth: 4)
            let message = DBusMessage.signal(path: "/a", interface: "org.example.Wire", member: "Sample", body: [value])
            let bytes = try WireWriter.message(message)
            let offset = try #require(bytes.withUnsafeBytes { WireFormat.bodyOffset(of: $0) })
            let body = Array(bytes[offset...])
            for index in body.indices {
                for replacement: UInt8 in [0, 1, 0x7F, 0xFF] {
                    var damaged = body
                    damaged[index] = replacement
                    _ = read(damaged, as: [value.type])
                }
            }
            for length in 0..<body.count { _ = read(Array(body[..<length]), as: [value.type]) }
        }
    }

    private func read(_ body: [UInt8], as types: [DBusType]) -> [DBusValue]? {
        body.withUnsafeBytes { bytes in
            var reader = WireReader(body: bytes, bigEndian: false)
            return try? reader.read(types)
        }
    }
}

/// A libdbus message made by `MessageCodec`, and its body as libdbus holds it.
private final class Loaded {
    let raw: OpaquePointer

    init(_ encoded: MessageCodec.Encoded) throws { raw = try MessageCodec.libdbusMessage(encoded) }

    convenience init(body: [DBusValue]) throws {
        let message = DBusMessage.signal(path: "/a/b", interface: "org.example.Wire", member: "Sample", body: body)
        try self.init(.withFileDescriptors(message))
    }

    deinit { dbus_message_unref(raw) }

    var bodyBytes: [UInt8] {
        (try? MessageCodec.withWireBody(of: raw) { body, _ throws(WireReader.Failure) in Array(body) }) ?? []
    }
}
