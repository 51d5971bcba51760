import CDBus

/// Converts between `DBusMessage` values and libdbus messages.
///
/// A message is marshalled in Swift (`WireWriter`) and handed to libdbus to load, which validates every byte the way
/// the bus will; a received one is copied out of libdbus in its wire form and read in Swift (`WireReader`). Messages
/// that carry file descriptors go through libdbus's iterators instead (`IteratorCodec`).
enum MessageCodec {
    /// A message checked and made ready for libdbus, on any thread; `libdbusMessage` then makes it on the connection's
    /// thread.
    enum Encoded: Sendable {
        case marshalled([UInt8])
        case withFileDescriptors(DBusMessage)
    }

    /// Checks everything libdbus would refuse or abort on, and marshals the message unless it carries file
    /// descriptors.
    static func encode(_ message: DBusMessage) throws(DBusError) -> Encoded {
        try validateHeader(message)
        return try encode(declared: message, as: message.body.map(\.type))
    }

    /// A message whose body `writeBody` writes in place of `message.body`: for a reply too large to build as values
    /// first (`GetManagedObjects`), of about `capacity` bytes.
    static func encode(
        _ message: DBusMessage, signature: DBusSignature, capacity: Int = 0,
        body writeBody: (inout WireWriter) throws(DBusError) -> Void
    ) throws(DBusError) -> Encoded {
        try validateHeader(message)
        return .marshalled(try WireWriter.message(message, signature: signature, capacity: capacity, body: writeBody))
    }

    /// A message whose body must be of `types` and whose interface and member the caller took from a description
    /// checked when it was exported (an object server's signal), or checked itself: the header is not checked here,
    /// and the body's values are checked against `types` as they are written, not turned into a signature first.
    static func encode(declared message: DBusMessage, as types: [DBusType]) throws(DBusError) -> Encoded {
        guard message.body.count == types.count else {
            throw .failed(
                "\(message.interface ?? "").\(message.member ?? "") takes '\(DBusType.signature(of: types))', "
                    + "not '\(message.signature)'"
            )
        }
        do {
            return .marshalled(try WireWriter.message(message, as: types))
        } catch let error where error == WireWriter.fileDescriptorMet {
            guard message.body.map(\.type) == types else {
                throw .invalidArgs("the body is '\(message.signature)', not '\(DBusType.signature(of: types))'")
            }
            for value in message.body { try value.validate() }
            return .withFileDescriptors(message)
        }
    }

    /// The libdbus message (+1 reference) for an encoded one, its serial left for the connection to assign.
    static func libdbusMessage(_ encoded: Encoded) throws(DBusError) -> OpaquePointer {
        switch encoded {
        case .marshalled(let bytes): return try load(bytes)
        case .withFileDescriptors(let message): return try build(message)
        }
    }

    /// Decodes a libdbus message; returns nil for a message libdbus itself would not have accepted.
    static func decode(_ raw: OpaquePointer) -> DBusMessage? {
        let kind: DBusMessage.Kind
        switch dbus_message_get_type(raw) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: kind = .signal
        default: return nil
        }
        var message = DBusMessage(kind: kind)
        message.serial = dbus_message_get_serial(raw)
        message.replySerial = dbus_message_get_reply_serial(raw)
        message.sender = dbus_message_get_sender(raw).map { String(cString: $0) }
        message.destination = dbus_message_get_destination(raw).map { String(cString: $0) }
        message.path = dbus_message_get_path(raw).flatMap { ObjectPath(String(cString: $0)) }
        message.interface = dbus_message_get_interface(raw).map { String(cString: $0) }
        message.member = dbus_message_get_member(raw).map { String(cString: $0) }
        message.errorName = dbus_message_get_error_name(raw).map { String(cString: $0) }
        message.noReplyExpected = dbus_message_get_no_reply(raw) != 0
        do {
            message.body = try body(of: raw)
        } catch .fileDescriptor {
            guard let body = IteratorCodec.body(of: raw) else { return nil }
            message.body = body
        } catch {
            return nil
        }
        return message
    }

    // MARK: Encoding

    /// Loads marshalled bytes into a libdbus message. Loading validates them as the bus would, so a mistake in the
    /// marshalling is refused here instead of getting the connection dropped by the bus.
    private static func load(_ bytes: [UInt8]) throws(DBusError) -> OpaquePointer {
        var error = DBusErrorStorage()
        defer { error.free() }
        let loaded = bytes.withUnsafeBytes { bytes in
            dbus_message_demarshal(bytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(bytes.count), &error.raw)
        }
        guard let loaded else { throw .invalidArgs(error.swiftError(fallback: "out of memory").message) }
        defer { dbus_message_unref(loaded) }
        // A copy has the serial 0, which the connection replaces with its next one when it sends it.
        guard let copy = dbus_message_copy(loaded) else { throw .failed("out of memory") }
        return copy
    }

    private static func build(_ message: DBusMessage) throws(DBusError) -> OpaquePointer {
        let type: Int32 = switch message.kind {
        case .methodCall: CDBUS_MESSAGE_TYPE_METHOD_CALL
        case .methodReturn: CDBUS_MESSAGE_TYPE_METHOD_RETURN
        case .error: CDBUS_MESSAGE_TYPE_ERROR
        case .signal: CDBUS_MESSAGE_TYPE_SIGNAL
        }
        guard let raw = dbus_message_new(type) else { throw .failed("out of memory") }
        var ok = true
        if let path = message.path { ok = ok && dbus_message_set_path(raw, path.rawValue) != 0 }
        if let interface = message.interface { ok = ok && dbus_message_set_interface(raw, interface) != 0 }
        if let member = message.member { ok = ok && dbus_message_set_member(raw, member) != 0 }
        if let destination = message.destination { ok = ok && dbus_message_set_destination(raw, destination) != 0 }
        if let errorName = message.errorName { ok = ok && dbus_message_set_error_name(raw, errorName) != 0 }
        if message.replySerial != 0 { ok = ok && dbus_message_set_reply_serial(raw, message.replySerial) != 0 }
        if message.kind != .methodCall || message.noReplyExpected { dbus_message_set_no_reply(raw, 1) }
        guard ok, IteratorCodec.append(message.body, to: raw) else {
            dbus_message_unref(raw)
            throw .failed("could not build the message (out of memory)")
        }
        return raw
    }

    /// The header fields libdbus would abort on, checked in Swift with errors that say which.
    private static func validateHeader(_ message: DBusMessage) throws(DBusError) {
        if let interface = message.interface, !DBusNames.isValidInterface(interface) {
            throw .invalidArgs("invalid interface name '\(interface)'")
        }
        if let member = message.member, !DBusNames.isValidMember(member) {
            throw .invalidArgs("invalid member name '\(member)'")
        }
        if let destination = message.destination, !DBusNames.isValidBusName(destination) {
            throw .invalidArgs("invalid bus name '\(destination)'")
        }
        if let errorName = message.errorName, !DBusNames.isValidErrorName(errorName) {
            throw .invalidArgs("invalid error name '\(errorName)'")
        }
        switch message.kind {
        case .methodCall:
            guard message.path != nil, message.member != nil else {
                throw .invalidArgs("a method call needs a path and a member")
            }
        case .signal:
            guard message.path != nil, message.interface != nil, message.member != nil else {
                throw .invalidArgs("a signal needs a path, an interface and a member")
            }
        case .error:
            guard message.errorName != nil, message.replySerial != 0 else {
                throw .invalidArgs("an error reply needs an error name and a reply serial")
            }
        case .methodReturn:
            guard message.replySerial != 0 else { throw .invalidArgs("a method return needs a reply serial") }
        }
    }

    // MARK: Decoding

    /// The body of `raw`, copied out in its wire form and read.
    private static func body(of raw: OpaquePointer) throws(WireReader.Failure) -> [DBusValue] {
        guard let cSignature = dbus_message_get_signature(raw) else { throw .malformed }
        guard cSignature.pointee != 0 else { return [] }
        guard let types = try? DBusType.parse(signature: String(cString: cSignature)) else { throw .malformed }
        return try withWireBody(of: raw) { body, bigEndian throws(WireReader.Failure) in
            var reader = WireReader(body: body, bigEndian: bigEndian)
            return try reader.read(types)
        }
    }

    /// Calls `use` with `raw`'s body as it goes on the wire, and whether it is big-endian.
    static func withWireBody<T>(
        of raw: OpaquePointer, _ use: (UnsafeRawBufferPointer, _ bigEndian: Bool) throws(WireReader.Failure) -> T
    ) throws(WireReader.Failure) -> T {
        var data: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(raw, &data, &length) != 0, let data else { throw .malformed }
        defer { dbus_free(data) }
        let message = UnsafeRawBufferPointer(start: data, count: Int(length))
        guard let offset = WireFormat.bodyOffset(of: message) else { throw .malformed }
        return try use(UnsafeRawBufferPointer(rebasing: message[offset...]), WireFormat.isBigEndian(message))
    }
}
