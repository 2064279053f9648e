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
        timestampText(date) ?? date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// What `Date.ISO8601FormatStyle(includingFractionalSeconds: true)` writes, for the years 1970
    /// to 9999, from `gmtime_r`; nil outside them. Every record and answer carries a time or three,
    /// and the format style sets up a calendar for each: a tenth of a job record's encoding.
    ///
    /// The fraction comes from the time since 2001, as the calendar takes it: the time since 1970
    /// is that plus a constant, a sum that may round across a millisecond.
    static func timestampText(_ date: Date) -> String? {
        let sinceReference = date.timeIntervalSinceReferenceDate
        let whole = sinceReference.rounded(.down)
        guard whole >= -978_307_200, whole < 253_402_300_800 - 978_307_200 else { return nil }
        var time = time_t(Int64(whole) + 978_307_200)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return nil }
        // Nanoseconds, then truncated to the millisecond, as the format style does.
        let milliseconds = Int((sinceReference - whole) * 1_000_000_000) / 1_000_000
        return String(unsafeUninitializedCapacity: 24) { text in
            var end = 0
            func put(_ value: Int, _ digits: Int, _ separator: Unicode.Scalar) {
                var rest = value
                for index in stride(from: end + digits - 1, through: end, by: -1) {
                    text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                text[end + digits] = UInt8(ascii: separator)
                end += digits + 1
            }
            put(Int(parts.tm_year) + 1900, 4, "-")
            put(Int(parts.tm_mon) + 1, 2, "-")
            put(Int(parts.tm_mday), 2, "T")
            put(Int(parts.tm_hour), 2, ":")
            put(Int(parts.tm_min), 2, ":")
            put(Int(parts.tm_sec), 2, ".")
            put(milliseconds, 3, "Z")
            return end
        }
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
