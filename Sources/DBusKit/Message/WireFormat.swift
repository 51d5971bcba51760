/// The constants of the D-Bus wire format that `WireWriter` and `WireReader` share.
enum WireFormat {
    /// A header field's code.
    enum Field: UInt8 {
        case path = 1, interface, member, errorName, replySerial, destination, sender, signature
    }

    /// The longest array (and string) the specification allows: 64 MiB.
    static let maximumArrayLength = 1 << 26
    /// The longest message: 128 MiB.
    static let maximumMessageLength = 1 << 27

    static func code(of kind: DBusMessage.Kind) -> UInt8 {
        switch kind {
        case .methodCall: 1
        case .methodReturn: 2
        case .error: 3
        case .signal: 4
        }
    }

    /// Only a method call may expect a reply; libdbus sets the same flag on everything else.
    static func flags(of message: DBusMessage) -> UInt8 {
        message.kind != .methodCall || message.noReplyExpected ? 0x1 : 0
    }

    /// Where a value of `type` starts: a multiple of this, counted from the message's first byte.
    static func alignment(of type: DBusType) -> Int {
        switch type {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array, .dictionary: 4
        case .int64, .uint64, .double, .structure: 8
        }
    }

    /// Whether a marshalled message is big-endian (its first byte says).
    static func isBigEndian(_ message: UnsafeRawBufferPointer) -> Bool { message.first == UInt8(ascii: "B") }

    /// The offset of a marshalled message's body: the fixed header, the header fields' array, padding to 8. Nil when
    /// the bytes are too few to hold it.
    static func bodyOffset(of message: UnsafeRawBufferPointer) -> Int? {
        guard message.count >= 16 else { return nil }
        let fieldsLength = message.loadUnaligned(fromByteOffset: 12, as: UInt32.self)
        let length = Int(isBigEndian(message) ? UInt32(bigEndian: fieldsLength) : UInt32(littleEndian: fieldsLength))
        let offset = (16 + length + 7) & ~7
        return offset <= message.count ? offset : nil
    }
}
