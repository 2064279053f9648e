import Foundation

/// Writes the bytes `WireCoding.encoder()` writes (compact, sorted snake_case keys, ISO 8601
/// times, slashes unescaped) without `JSONEncoder`'s per-key coding paths and key-strategy calls:
/// every answer, event and journal record is encoded here.
///
/// Values build a small tree (objects, arrays, and scalars already written out as JSON text in one
/// shared buffer), which is written once every container is complete, objects with their keys in
/// byte order as `.sortedKeys` sorts them. A value it does not write as `JSONEncoder` would (`Data`,
/// `URL`, `Decimal`, a non-finite number, `superEncoder`) throws `Unsupported`, and
/// `WireCoding.bytes` then uses `JSONEncoder`.
struct WireJSONEncoder {
    struct Unsupported: Error {}

    func bytes(_ value: some Encodable) throws -> [UInt8] {
        let tree = Tree()
        let root = try tree.slot(for: value)
        if tree.refused { throw Unsupported() }
        var out = [UInt8]()
        out.reserveCapacity(tree.text.count + 256)
        try tree.write(root, to: &out)
        return out
    }
}

extension WireJSONEncoder {
    /// A value's place in the tree.
    enum Slot {
        /// JSON text in `Tree.text`.
        case text(Range<Int>)
        case object(ObjectBox)
        case array(ArrayBox)
        /// A value that encoded nothing: `JSONEncoder` writes `{}`.
        case empty
    }

    final class ObjectBox {
        var entries: [(key: String, slot: Slot)] = []
    }

    final class ArrayBox {
        var items: [Slot] = []
    }

    /// Dictionaries with `String` keys: `JSONEncoder` keeps their keys as they are.
    fileprivate protocol StringKeyedDictionary {}

    final class Tree {
        /// The scalars' JSON text, one after another.
        var text: [UInt8] = []
        /// Set when a value asked for what is not written here (`superEncoder`).
        var refused = false

        init() { text.reserveCapacity(1024) }

        func slot<T: Encodable>(for value: T) throws -> Slot {
            if T.self == Date.self, let date = value as? Date { return string(WireCoding.formatTimestamp(date)) }
            if T.self == String.self, let string = value as? String { return self.string(string) }
            if T.self == Data.self || T.self == URL.self || T.self == Decimal.self { throw Unsupported() }
            let encoder = ValueEncoder(tree: self, keepsKeys: T.self is any StringKeyedDictionary.Type)
            try value.encode(to: encoder)
            return encoder.slot
        }

        /// An encoder whose output is dropped, for `superEncoder`: the whole encoding is refused.
        func refusing() -> any Encoder {
            refused = true
            return ValueEncoder(tree: self)
        }

        func scalar(_ ascii: some Sequence<UInt8>) -> Slot {
            let start = text.count
            text.append(contentsOf: ascii)
            return .text(start..<text.count)
        }

        func integer(_ value: some BinaryInteger) -> Slot { scalar(String(value).utf8) }

        func floating<F: BinaryFloatingPoint & CustomStringConvertible>(_ value: F) throws -> Slot {
            guard value.isFinite else { throw Unsupported() }
            var description = value.description
            if description.hasSuffix(".0") { description.removeLast(2) }
            return scalar(description.utf8)
        }

        func string(_ value: String) -> Slot {
            let start = text.count
            Self.quote(value, into: &text)
            return .text(start..<text.count)
        }

        /// `value` as a JSON string: `"`, `\` and control characters escaped as `JSONEncoder` does.
        static func quote(_ value: String, into out: inout [UInt8]) {
            out.append(UInt8(ascii: "\""))
            var value = value
            value.withUTF8 { bytes in
                var plainFrom = 0
                for index in bytes.indices {
                    let byte = bytes[index]
                    guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plainFrom..<index]))
                    plainFrom = index + 1
                    switch byte {
                    case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                    case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                    case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                    case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                    case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                    case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                    case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                    default:
                        out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                        HexDigits.append(byte, to: &out)
                    }
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[plainFrom...]))
            }
            out.append(UInt8(ascii: "\""))
        }

        func write(_ slot: Slot, to out: inout [UInt8]) throws {
            switch slot {
            case .text(let range):
                out.append(contentsOf: text[range])
            case .empty:
                out.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
            case .array(let box):
                out.append(UInt8(ascii: "["))
                for (index, item) in box.items.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    try write(item, to: &out)
                }
                out.append(UInt8(ascii: "]"))
            case .object(let box):
                // Sorted by the keys' bytes; of a key given twice, the last value counts.
                let order = box.entries.indices.sorted { left, right in
                    let a = box.entries[left].key, b = box.entries[right].key
                    return a == b ? left < right : a.utf8.lexicographicallyPrecedes(b.utf8)
                }
                out.append(UInt8(ascii: "{"))
                var first = true
                for (position, index) in order.enumerated() {
                    let key = box.entries[index].key
                    if position + 1 < order.count, box.entries[order[position + 1]].key == key { continue }
                    if !first { out.append(UInt8(ascii: ",")) }
                    first = false
                    Self.quote(key, into: &out)
                    out.append(UInt8(ascii: ":"))
                    try write(box.entries[index].slot, to: &out)
                }
                out.append(UInt8(ascii: "}"))
            }
        }
    }
}

extension Dictionary: WireJSONEncoder.StringKeyedDictionary where Key == String {}

extension WireJSONEncoder {
    /// The encoder one value is given; its containers fill `slot`.
    final class ValueEncoder: Encoder {
        let tree: Tree
        /// Whether keys are written as they are (a dictionary's) or in snake_case.
        let keepsKeys: Bool
        var slot: Slot = .empty
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        init(tree: Tree, keepsKeys: Bool = false) {
            self.tree = tree
            self.keepsKeys = keepsKeys
        }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            let box: ObjectBox
            if case .object(let existing) = slot {
                box = existing
            } else {
                box = ObjectBox()
                slot = .object(box)
            }
            return KeyedEncodingContainer(Keyed<Key>(tree: tree, box: box, keepsKeys: keepsKeys))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            let box: ArrayBox
            if case .array(let existing) = slot {
                box = existing
            } else {
                box = ArrayBox()
                slot = .array(box)
            }
            return Unkeyed(tree: tree, box: box)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer { Single(encoder: self) }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let tree: Tree
        let box: ObjectBox
        let keepsKeys: Bool
        var codingPath: [any CodingKey] { [] }

        private func put(_ slot: Slot, _ key: Key) {
            let name = keepsKeys || key.intValue != nil ? key.stringValue : SnakeCaseKeys.snake(key.stringValue)
            box.entries.append((name, slot))
        }

        mutating func encodeNil(forKey key: Key) throws { put(tree.scalar("null".utf8), key) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { put(tree.scalar((value ? "true" : "false").utf8), key) }
        mutating func encode(_ value: String, forKey key: Key) throws { put(tree.string(value), key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { put(try tree.floating(value), key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { put(try tree.floating(value), key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { put(tree.integer(value), key) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { put(try tree.slot(for: value), key) }

        // Absent values write nothing, as the protocol's own versions do; those wrap the value in
        // an `Optional` looked up at run time, for every optional member of every record.
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { if let value { try encode(value, forKey: key) } }
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            if let value { put(try tree.slot(for: value), key) }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectBox()
            put(.object(nested), key)
            return KeyedEncodingContainer(Keyed<NestedKey>(tree: tree, box: nested, keepsKeys: false))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let nested = ArrayBox()
            put(.array(nested), key)
            return Unkeyed(tree: tree, box: nested)
        }

        mutating func superEncoder() -> any Encoder { tree.refusing() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { tree.refusing() }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let tree: Tree
        let box: ArrayBox
        var codingPath: [any CodingKey] { [] }
        var count: Int { box.items.count }

        mutating func encodeNil() throws { box.items.append(tree.scalar("null".utf8)) }
        mutating func encode(_ value: Bool) throws { box.items.append(tree.scalar((value ? "true" : "false").utf8)) }
        mutating func encode(_ value: String) throws { box.items.append(tree.string(value)) }
        mutating func encode(_ value: Double) throws { box.items.append(try tree.floating(value)) }
        mutating func encode(_ value: Float) throws { box.items.append(try tree.floating(value)) }
        mutating func encode(_ value: Int) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: Int8) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: Int16) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: Int32) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: Int64) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: UInt) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: UInt8) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: UInt16) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: UInt32) throws { box.items.append(tree.integer(value)) }
        mutating func encode(_ value: UInt64) throws { box.items.append(tree.integer(value)) }
        mutating func encode<T: Encodable>(_ value: T) throws { box.items.append(try tree.slot(for: value)) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            let nested = ObjectBox()
            box.items.append(.object(nested))
            return KeyedEncodingContainer(Keyed<NestedKey>(tree: tree, box: nested, keepsKeys: false))
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let nested = ArrayBox()
            box.items.append(.array(nested))
            return Unkeyed(tree: tree, box: nested)
        }

        mutating func superEncoder() -> any Encoder { tree.refusing() }
    }

    struct Single: SingleValueEncodingContainer {
        let encoder: ValueEncoder
        var codingPath: [any CodingKey] { [] }
        private var tree: Tree { encoder.tree }

        mutating func encodeNil() throws { encoder.slot = tree.scalar("null".utf8) }
        mutating func encode(_ value: Bool) throws { encoder.slot = tree.scalar((value ? "true" : "false").utf8) }
        mutating func encode(_ value: String) throws { encoder.slot = tree.string(value) }
        mutating func encode(_ value: Double) throws { encoder.slot = try tree.floating(value) }
        mutating func encode(_ value: Float) throws { encoder.slot = try tree.floating(value) }
        mutating func encode(_ value: Int) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: Int8) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: Int16) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: Int32) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: Int64) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: UInt) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: UInt8) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: UInt16) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: UInt32) throws { encoder.slot = tree.integer(value) }
        mutating func encode(_ value: UInt64) throws { encoder.slot = tree.integer(value) }
        mutating func encode<T: Encodable>(_ value: T) throws { encoder.slot = try tree.slot(for: value) }
    }
}
