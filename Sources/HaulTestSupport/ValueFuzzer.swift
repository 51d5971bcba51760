package import DBusKit
import Glibc
import HaulContract

/// Random D-Bus values: any type, edge values first, containers nested as deep as the bus allows. Seeded: a run of
/// hostile calls replays exactly.
package struct ValueFuzzer {
    package var random: SplitMix64
    /// What a string is drawn from.
    package let strings: [String]
    /// Whether values may be unix file descriptors (each a `dup` of stderr, open until the value goes).
    package let fileDescriptors: Bool

    package init(random: SplitMix64, strings: [String], fileDescriptors: Bool = true) {
        self.random = random
        self.strings = strings
        self.fileDescriptors = fileDescriptors
    }

    /// The deepest nesting the bus lets through: a message with containers 65 deep is invalid, and the bus
    /// disconnects its sender.
    package static let deepest = 64

    package mutating func pick<T>(_ choices: [T]) -> T { choices[Int.random(in: 0..<choices.count, using: &random)] }

    package mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    /// A random complete type, its containers at most `depth` deep.
    package mutating func type(depth: Int = 3) -> DBusType {
        let basic: [DBusType] =
            [
                .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath,
                .signature,
            ] + (fileDescriptors ? [.unixFD] : [])
        guard depth > 0, chance(40) else { return pick(basic) }
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .array(type(depth: depth - 1))
        case 1: return .dictionary(key: pick(basic), value: type(depth: depth - 1))
        case 2: return .structure((0..<Int.random(in: 1...3, using: &random)).map { _ in type(depth: depth - 1) })
        default: return .variant
        }
    }

    /// A random value of a random type.
    package mutating func value(depth: Int = 3) -> DBusValue { value(of: type(depth: depth), depth: depth) }

    /// A value of `type`, edge values preferred.
    package mutating func value(of type: DBusType, depth: Int = 3) -> DBusValue {
        switch type {
        case .byte: return .byte(pick([0, 1, 127, 128, 255]))
        case .boolean: return .boolean(chance(50))
        case .int16: return .int16(pick([.min, -1, 0, 1, .max]))
        case .uint16: return .uint16(pick([0, 1, .max]))
        case .int32: return .int32(pick([.min, -1, 0, 1, .max]))
        case .uint32: return .uint32(pick([0, 1, 5, .max]))
        case .int64: return .int64(pick([.min, -1, 0, 1, .max]))
        case .uint64: return .uint64(pick([0, 1, .max]))
        case .double:
            return .double(
                pick([.nan, -.nan, .infinity, -.infinity, -0.0, 0, 1e308, -1e308, .leastNonzeroMagnitude, 61, -1, 0.17])
            )
        case .string: return .string(pick(strings))
        case .objectPath:
            return .objectPath(pick(["/", HaulBus.taskPath(0), HaulBus.taskPath(.max), "/a/b_c/D9"]))
        case .signature:
            let some = self.type(depth: 2)
            return .signature(DBusSignature(pick([[], [.variant], [some, .string]])))
        case .unixFD: return .unixFD(DBusFileDescriptor(owning: dup(2)))
        case .variant:
            return .variant(depth > 0 ? value(depth: depth - 1) : .string(pick(strings)))
        case .array(let element):
            let count = depth > 0 ? Int.random(in: 0...3, using: &random) : 0
            return .array(element, (0..<count).map { _ in value(of: element, depth: depth - 1) })
        case .dictionary(let key, let valueType):
            let count = depth > 0 ? Int.random(in: 0...3, using: &random) : 0
            return .dictionary(
                key: key, value: valueType,
                (0..<count).map { _ in DBusDictEntry(value(of: key, depth: 0), value(of: valueType, depth: depth - 1)) }
            )
        case .structure(let fields):
            return .structure(fields.map { value(of: $0, depth: depth - 1) })
        }
    }

    /// Variants inside variants, `depth` deep.
    package mutating func deepVariant(_ depth: Int = deepest) -> DBusValue {
        (0..<depth).reduce(value(depth: 0)) { inner, _ in .variant(inner) }
    }

    /// Arrays of arrays as deep as a signature allows (32), inside a variant.
    package mutating func deepArray() -> DBusValue {
        var type = DBusType.byte
        var value = DBusValue.array(.byte, [.byte(1)])
        for _ in 1..<32 {
            type = .array(type)
            value = .array(type, [value])
        }
        return .variant(value)
    }

    /// Structures inside structures, 32 deep.
    package mutating func deepStructure() -> DBusValue {
        (0..<32).reduce(DBusValue.string("core")) { inner, _ in .structure([inner]) }
    }
}
