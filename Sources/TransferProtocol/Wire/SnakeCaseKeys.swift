import Foundation
import Synchronization

/// The wire's snake_case keys, converted by Foundation's own rules once per key and remembered.
///
/// `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase` (and its decoding twin) converts every key
/// of every value it encodes, character by character: a quarter of the time a submit took. These
/// strategies give the same keys, each converted the first time it is seen.
enum SnakeCaseKeys {
    private static let toSnake = Mutex<[String: String]>([:])
    private static let fromSnake = Mutex<[String: String]>([:])

    /// What `.convertToSnakeCase` makes of `key`.
    static func snake(_ key: String) -> String {
        // Without a capital letter there is no word to split: the key stays as it is. Most keys
        // are one word; this skips the lock and the lookup for each of them.
        if key.utf8.allSatisfy({ $0 < 0x80 && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) { return key }
        if let known = toSnake.withLock({ $0[key] }) { return known }
        let converted = foundationSnake(key) ?? key
        toSnake.withLock { $0[key] = converted }
        return converted
    }

    /// What `.convertFromSnakeCase` makes of `key`.
    static func camel(_ key: String) -> String {
        if let known = fromSnake.withLock({ $0[key] }) { return known }
        let converted = foundationCamel(key) ?? key
        fromSnake.withLock { $0[key] = converted }
        return converted
    }

    static let encodingStrategy = JSONEncoder.KeyEncodingStrategy.custom { path in
        guard let last = path.last else { return WireKey("") }
        return last.intValue == nil ? WireKey(snake(last.stringValue)) : last
    }

    static let decodingStrategy = JSONDecoder.KeyDecodingStrategy.custom { path in
        guard let last = path.last else { return WireKey("") }
        return last.intValue == nil ? WireKey(camel(last.stringValue)) : last
    }

    /// Encodes an object with the one key `key` under Foundation's strategy and reads the key back.
    private static func foundationSnake(_ key: String) -> String? {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        guard let data = try? encoder.encode(OneKey(name: key)),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object.keys.first
    }

    /// Decodes `{"<key>": null}` under Foundation's strategy and reads the key it became.
    private static func foundationCamel(_ key: String) -> String? {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        guard let data = try? JSONSerialization.data(withJSONObject: [key: NSNull()]) else { return nil }
        return (try? decoder.decode(KeysOf.self, from: data))?.keys.first
    }

    private struct OneKey: Encodable {
        var name: String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: WireKey.self)
            try container.encodeNil(forKey: WireKey(name))
        }
    }

    private struct KeysOf: Decodable {
        var keys: [String]
        init(from decoder: any Decoder) throws {
            keys = try decoder.container(keyedBy: WireKey.self).allKeys.map(\.stringValue)
        }
    }
}

/// A coding key made from its text.
struct WireKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ stringValue: String) { self.stringValue = stringValue }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
