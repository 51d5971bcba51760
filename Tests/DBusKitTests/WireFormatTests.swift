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

    /// A body of 64 KiB or more shares the values it repeats (`SharedValues`): values whose payloads have the same
    /// bytes but another type, or the same type and other bytes, must still read back as themselves.
    @Test func aLargeBodyReadsBackAsSentWhenItsValuesAreShared() throws {
        let lookalikes: [DBusValue] = [
            .boolean(true), .uint32(1), .int32(1), .int16(1), .uint16(1), .byte(1), .int64(1), .uint64(1),
            .double(Double(bitPattern: 1)), .boolean(false), .uint32(0), .double(0), .string(""), .string("a"),
            .objectPath("/a"), .string("/a"), .string("sixteen bytes..."), .string("sixteen bytes..!"),
            .string("seventeen bytes.."), .string("seventeen bytes!."), .objectPath("/org/example/Objects/1"),
            .variant(.uint32(1)), .dictionary(key: .string, value: .variant, []),
            .dictionary(key: .string, value: .string, []), .dictionary(key: .uint32, value: .variant, []),
        ]
        var fuzzer = ValueFuzzer(random: SplitMix64(seed: 64), strings: Self.strings, fileDescriptors: false)
        let entries = (0..<3000).map { index in
            let value = index.isMultiple(of: 3) ? fuzzer.value(depth: 2) : lookalikes[index % lookalikes.count]
            return DBusDictEntry(.string("property number \(index % 40)"), .variant(value))
        }
        let body: [DBusValue] = [.dictionary(key: .string, value: .variant, entries)]
        let message = DBusMessage.signal(path: "/a", interface: "org.example.Wire", member: "Large", body: body)
        let loaded = try Loaded(.marshalled(WireWriter.message(message)))
        #expect(loaded.bodyBytes.count >= SharedValues.minimumBodyLength)

        let read = try #require(MessageCodec.decode(loaded.raw)?.body)
        #expect(try Loaded(body: read).bodyBytes == loaded.bodyBytes)
        guard case .dictionary(_, _, let readEntries)? = read.first else { Issue.record("not a dictionary"); return }
        #expect(readEntries.count == entries.count)
        // The look-alikes by value too (a random value may hold a NaN, which equals nothing).
        for (index, (sent, got)) in zip(entries, readEntries).enumerated() where !index.isMultiple(of: 3) {
            #expect(got == sent)
        }
    }

    /// A damaged large body, read with its values shared, is refused or read, never a trap.
    @Test func theReaderSurvivesDamagedLargeBodies() throws {
        let entries = (0..<4000).map { index in
            DBusDictEntry(.string("name \(index % 7)"), .variant(index.isMultiple(of: 2) ? .uint32(7) : .string("s")))
        }
        let value = DBusValue.dictionary(key: .string, value: .variant, entries)
        let message = DBusMessage.signal(path: "/a", interface: "org.example.Wire", member: "Large", body: [value])
        let bytes = try WireWriter.message(message)
        let offset = try #require(bytes.withUnsafeBytes { WireFormat.bodyOffset(of: $0) })
        let body = Array(bytes[offset...])
        #expect(body.count >= SharedValues.minimumBodyLength)
        let readWhole = read(body, as: [value.type]) == [value]
        #expect(readWhole)
        // A repeat of the short string "s" without its NUL is refused, though its bytes up to there match.
        let string: [UInt8] = [1, 0, 0, 0, UInt8(ascii: "s"), 0]
        let repeats = body.indices.dropLast(string.count).filter { body[$0..<$0 + string.count].elementsEqual(string) }
        var unterminated = body
        unterminated[try #require(repeats.dropFirst().first) + 5] = UInt8(ascii: "x")
        let refused = read(unterminated, as: [value.type]) == nil
        #expect(refused)
        var random = SplitMix64(seed: 3)
        for _ in 0..<400 {
            var damaged = body
            for _ in 0..<3 {
                damaged[Int.random(in: damaged.indices, using: &random)] = .random(in: 0...255, using: &random)
            }
            _ = read(damaged, as: [value.type])
            _ = read(Array(body[..<Int.random(in: 0..<body.count, using: &random)]), as: [value.type])
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
