/// A value that saved files spell with a name of their own, written out where the type adopts this.
///
/// The raw values of HaulCore's enums are the bus strings; a file never uses them. A bus string may then be renamed
/// without changing a saved file, and every file saved before still loads.
protocol RecordNamed: CaseIterable {
    /// What a reader is told was expected, in an error about a name that is none of these (`a task state`).
    static var recordDescription: String { get }
    /// The name in a saved file.
    var recordName: String { get }
}

extension RecordNamed {
    /// The value saved as `name`, or nil.
    init?(recordName name: String) {
        guard let value = Self.allCases.first(where: { $0.recordName == name }) else { return nil }
        self = value
    }
}

extension KeyedDecodingContainer {
    /// Decodes a value saved by its record name; an unknown name makes the file corrupt.
    func decodeRecordName<Value: RecordNamed>(_ type: Value.Type, forKey key: Key) throws -> Value {
        let name = try decode(String.self, forKey: key)
        guard let value = Value(recordName: name) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "'\(name)' is not \(Value.recordDescription)"
            )
        }
        return value
    }

    /// Decodes a value saved by its record name, or nil when the key is missing or null.
    func decodeRecordNameIfPresent<Value: RecordNamed>(_ type: Value.Type, forKey key: Key) throws -> Value? {
        guard try contains(key) && !decodeNil(forKey: key) else { return nil }
        return try decodeRecordName(type, forKey: key)
    }
}

extension KeyedEncodingContainer {
    /// Encodes a value as its record name.
    mutating func encodeRecordName(_ value: some RecordNamed, forKey key: Key) throws {
        try encode(value.recordName, forKey: key)
    }
}
