import DBusKit
import Testing

@Suite("Marshalling through a real bus", .timeLimit(.minutes(2)))
struct MarshallingTests {
    static let samples: [DBusValue] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false),
        .int16(.min), .int16(.max), .uint16(.max), .int32(.min), .int32(.max), .uint32(.max),
        .int64(.min), .int64(.max), .uint64(.max), .uint64(0),
        .double(-0.5), .double(.greatestFiniteMagnitude), .double(.infinity),
        .string(""), .string("héllo wörld — 日本語 🚀"), .objectPath("/"), .objectPath("/a/b_c/D9"),
        .signature(try! DBusSignature("a{sv}(iu)ah")),
        .array(.string, []), .array(.int32, []), .array(.array(.byte), []),
        .strings(["a", "b", ""]),
        .array(.byte, (0...255).map { .byte(UInt8($0)) }),
        .dictionary(key: .string, value: .variant, []),
        .vardict(["x": .int32(1), "nested": .variant(.variant(.string("deep")))]),
        .dictionary(
            key: .uint32, value: .structure([.string, .double]),
            [DBusDictEntry(.uint32(1), .structure([.string("one"), .double(1.5)]))]
        ),
        .structure([.int32(1), .structure([.string("in"), .array(.boolean, [.boolean(true)])])]),
        .variant(.variant(.variant(.uint16(7)))),
        .array(.dictionary(key: .string, value: .variant), [.vardict([:]), .vardict(["k": .boolean(false)])]),
    ]

    @Test("every type survives a round trip through the bus", arguments: samples)
    func roundTrip(_ value: DBusValue) async throws {
        try await BusFixture.with { fixture in
            let echoed = try await fixture.echo(value)
            #expect(echoed == value)
        }
    }

    @Test func emptyArraysKeepTheirElementType() async throws {
        try await BusFixture.with { fixture in
            let strings = try await fixture.echo(.array(.string, []))
            let ints = try await fixture.echo(.array(.int32, []))
            #expect(strings?.type.signature == "as")
            #expect(ints?.type.signature == "ai")
            #expect(strings != ints)
        }
    }

    @Test func unixFileDescriptorsArePassed() async throws {
        try await BusFixture.with { fixture in
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            defer { close(fds[0]); close(fds[1]) }
            let sent = try #require(DBusFileDescriptor(duplicating: fds[1]))
            guard case .unixFD(let received)? = try await fixture.echo(.unixFD(sent)) else {
                Issue.record("no descriptor came back")
                return
            }
            #expect(received.rawValue != fds[1])
            let byte: [UInt8] = [42]
            #expect(write(received.rawValue, byte, 1) == 1)
            var readBack: [UInt8] = [0]
            #expect(read(fds[0], &readBack, 1) == 1)
            #expect(readBack == [42])
        }
    }

    @Test func invalidValuesAreRefusedNotSent() async throws {
        try await BusFixture.with { fixture in
            await #expect(throws: DBusError.self) { try await fixture.echo(.array(.string, [.int32(1)])) }
            await #expect(throws: DBusError.self) { try await fixture.echo(.string("nul\0byte")) }
            await #expect(throws: DBusError.self) { try await fixture.echo(.structure([])) }
            // The connection still works afterwards.
            let echoed = try await fixture.echo(.string("ok"))
            #expect(echoed == .string("ok"))
        }
    }

    @Test func signaturesAreParsedAndLimited() throws {
        #expect(try DBusType.parse(signature: "a{sv}ai(sa{oa{sa{sv}}})") .count == 3)
        #expect(throws: DBusError.self) { try DBusType.parse(signature: "a{vs}") }
        #expect(throws: DBusError.self) { try DBusType.parse(signature: "(") }
        #expect(throws: DBusError.self) { try DBusType.parse(signature: "()") }
        #expect(throws: DBusError.self) { try DBusType.parse(signature: "a") }
        #expect(throws: DBusError.self) { try DBusType.parse(signature: String(repeating: "a", count: 33) + "i") }
        #expect(throws: DBusError.self) { try DBusType.parse(signature: "z") }
        // Through a variable: `ObjectPath("literal")` is literal coercion, which traps on an invalid path.
        for invalid in ["/a//b", "/a/", "//", "a", "/a-b", "/é", "/a/b c", ""] {
            #expect(ObjectPath(invalid) == nil)
        }
        for valid in ["/", "/a", "/a_b/C9"] {
            #expect(ObjectPath(valid)?.rawValue == valid)
        }
    }

    @Test func aPathDescendsFromItselfAndTheElementsAboveIt() {
        let task: ObjectPath = "/org/example/Items/7"
        for ancestor: ObjectPath in ["/", "/org", "/org/example", "/org/example/Items/7"] {
            #expect(task.isDescendant(of: ancestor), "\(ancestor)")
        }
        // A prefix that ends inside an element is not an ancestor.
        for other: ObjectPath in ["/org/exam", "/org/example/Items/70", "/org/example/Items/7/a", "/a"] {
            #expect(!task.isDescendant(of: other), "\(other)")
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
