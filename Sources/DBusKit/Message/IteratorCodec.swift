import CDBus

/// Builds and reads message bodies through libdbus's iterators: the way for messages that carry file descriptors,
/// which libdbus alone can attach to a message and duplicate out of one. Everything else takes the wire format
/// (`WireWriter`, `WireReader`), which costs a fraction of the library calls.
enum IteratorCodec {
    /// Appends `body`, already validated (libdbus aborts on what `DBusValue.validate` refuses), to `raw`.
    static func append(_ body: [DBusValue], to raw: OpaquePointer) -> Bool {
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        return body.allSatisfy { append($0, to: &iter) }
    }

    /// The body of `raw`; nil for one libdbus itself would not have accepted.
    static func body(of raw: OpaquePointer) -> [DBusValue]? {
        var body: [DBusValue] = []
        var iter = DBusMessageIter()
        if dbus_message_iter_init(raw, &iter) != 0 {
            repeat {
                guard let value = read(&iter) else { return nil }
                body.append(value)
            } while dbus_message_iter_next(&iter) != 0
        }
        return body
    }

    // MARK: Writing

    private static func append(_ value: DBusValue, to iter: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let v): return appendBasic(v, CDBUS_TYPE_BYTE, &iter)
        case .boolean(let v): return appendBasic(dbus_bool_t(v ? 1 : 0), CDBUS_TYPE_BOOLEAN, &iter)
        case .int16(let v): return appendBasic(v, CDBUS_TYPE_INT16, &iter)
        case .uint16(let v): return appendBasic(v, CDBUS_TYPE_UINT16, &iter)
        case .int32(let v): return appendBasic(v, CDBUS_TYPE_INT32, &iter)
        case .uint32(let v): return appendBasic(v, CDBUS_TYPE_UINT32, &iter)
        case .int64(let v): return appendBasic(v, CDBUS_TYPE_INT64, &iter)
        case .uint64(let v): return appendBasic(v, CDBUS_TYPE_UINT64, &iter)
        case .double(let v): return appendBasic(v, CDBUS_TYPE_DOUBLE, &iter)
        case .unixFD(let fd): return appendBasic(fd.rawValue, CDBUS_TYPE_UNIX_FD, &iter)
        case .string(let v): return appendString(v, CDBUS_TYPE_STRING, &iter)
        case .objectPath(let v): return appendString(v.rawValue, CDBUS_TYPE_OBJECT_PATH, &iter)
        case .signature(let v): return appendString(v.rawValue, CDBUS_TYPE_SIGNATURE, &iter)
        case .array(let element, let values):
            return appendContainer(CDBUS_TYPE_ARRAY, element.signature, &iter) { sub in
                values.allSatisfy { append($0, to: &sub) }
            }
        case .dictionary(let key, let valueType, let entries):
            return appendContainer(CDBUS_TYPE_ARRAY, "{\(key.signature)\(valueType.signature)}", &iter) { sub in
                entries.allSatisfy { entry in
                    appendContainer(CDBUS_TYPE_DICT_ENTRY, nil, &sub) { pair in
                        append(entry.key, to: &pair) && append(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            return appendContainer(CDBUS_TYPE_STRUCT, nil, &iter) { sub in fields.allSatisfy { append($0, to: &sub) } }
        case .variant(let inner):
            return appendContainer(CDBUS_TYPE_VARIANT, inner.type.signature, &iter) { sub in append(inner, to: &sub) }
        }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ value: T, _ type: Int32, _ iter: inout DBusMessageIter) -> Bool {
        var value = value
        return dbus_message_iter_append_basic(&iter, type, &value) != 0
    }

    private static func appendString(_ value: String, _ type: Int32, _ iter: inout DBusMessageIter) -> Bool {
        value.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &pointer) != 0
        }
    }

    private static func appendContainer(
        _ type: Int32, _ signature: String?, _ iter: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) != 0 }
            } else {
                dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
            }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    // MARK: Reading

    private static func read(_ iter: inout DBusMessageIter) -> DBusValue? {
        switch dbus_message_iter_get_arg_type(&iter) {
        case CDBUS_TYPE_BYTE: return .byte(readBasic(&iter, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(readBasic(&iter, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(readBasic(&iter, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(readBasic(&iter, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(readBasic(&iter, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(readBasic(&iter, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(readBasic(&iter, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(readBasic(&iter, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(readBasic(&iter, Double(0)))
        case CDBUS_TYPE_UNIX_FD:
            // libdbus hands out a duplicate that the reader owns.
            return .unixFD(DBusFileDescriptor(owning: readBasic(&iter, Int32(-1))))
        case CDBUS_TYPE_STRING: return .string(readString(&iter))
        case CDBUS_TYPE_OBJECT_PATH: return ObjectPath(readString(&iter)).map(DBusValue.objectPath)
        case CDBUS_TYPE_SIGNATURE: return (try? DBusSignature(readString(&iter))).map(DBusValue.signature)
        case CDBUS_TYPE_ARRAY: return readArray(&iter)
        case CDBUS_TYPE_STRUCT:
            guard let fields = readChildren(&iter), !fields.isEmpty else { return nil }
            return .structure(fields)
        case CDBUS_TYPE_VARIANT:
            // One value, read without the array `readChildren` would build: replies hold many variants.
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID, let inner = read(&sub),
                dbus_message_iter_next(&sub) == 0
            else { return nil }
            return .variant(inner)
        default: return nil
        }
    }

    private static func readBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ initial: T) -> T {
        var value = initial
        dbus_message_iter_get_basic(&iter, &value)
        return value
    }

    private static func readString(_ iter: inout DBusMessageIter) -> String {
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &pointer)
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The values inside the container at `iter`.
    private static func readChildren(_ iter: inout DBusMessageIter) -> [DBusValue]? {
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &sub)
        var values: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
            guard let value = read(&sub) else { return nil }
            values.append(value)
            dbus_message_iter_next(&sub)
        }
        return values
    }

    private static func readArray(_ iter: inout DBusMessageIter) -> DBusValue? {
        // The full signature, so an empty array keeps its element type.
        guard let cSignature = dbus_message_iter_get_signature(&iter) else { return nil }
        let signature = String(cString: cSignature)
        dbus_free(cSignature)
        guard let type = try? DBusType(signature: signature) else { return nil }
        switch type {
        case .dictionary(let key, let value):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var entries: [DBusDictEntry] = []
            while dbus_message_iter_get_arg_type(&sub) == CDBUS_TYPE_DICT_ENTRY {
                // The key and the value, read in place (a reply may hold hundreds of thousands of entries).
                var pair = DBusMessageIter()
                dbus_message_iter_recurse(&sub, &pair)
                guard let key = read(&pair), dbus_message_iter_next(&pair) != 0, let value = read(&pair),
                    dbus_message_iter_next(&pair) == 0
                else { return nil }
                entries.append(DBusDictEntry(key, value))
                dbus_message_iter_next(&sub)
            }
            return .dictionary(key: key, value: value, entries)
        case .array(let element):
            guard let values = readChildren(&iter) else { return nil }
            return .array(element, values)
        default:
            return nil
        }
    }
}
