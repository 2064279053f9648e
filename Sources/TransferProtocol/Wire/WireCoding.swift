public import Foundation

/// The JSON conventions of the wire and the journal: snake_case keys, ISO 8601 times.
public enum WireCoding {
    /// An encoder producing one compact line (no newlines inside) with snake_case keys.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = SnakeCaseKeys.encodingStrategy
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(formatTimestamp(date))
        }
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A decoder for what `encoder()` writes.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = SnakeCaseKeys.decodingStrategy
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = parseTimestamp(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected an ISO 8601 time, got \(text)")
            }
            return date
        }
        return decoder
    }

    /// Formats a time as ISO 8601 UTC with milliseconds, e.g. `2026-11-22T10:00:00.123Z`.
    public static func formatTimestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Parses an ISO 8601 time with or without fractional seconds.
    public static func parseTimestamp(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) {
            return date
        }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

extension WireCoding {
    /// `value` as `encoder()` would encode it, by `WireJSONEncoder` when it can (several times
    /// faster), else by `JSONEncoder`.
    public static func encode(_ value: some Encodable) throws -> Data { Data(try bytes(value)) }

    /// The same as bytes, as the journal keeps records, without a copy through `Data`.
    public static func bytes(_ value: some Encodable) throws -> [UInt8] {
        do {
            return try WireJSONEncoder().bytes(value)
        } catch is WireJSONEncoder.Unsupported {
            return Array(try encoder().encode(value))
        }
    }
}

/// `WireCoding.encode` where a `JSONEncoder` would be kept: `encoder.encode(value)`.
public struct WireEncoder: Sendable {
    public init() {}

    public func encode(_ value: some Encodable) throws -> Data { try WireCoding.encode(value) }

    /// `WireCoding.bytes`: for journal records.
    public func bytes(_ value: some Encodable) throws -> [UInt8] { try WireCoding.bytes(value) }
}
