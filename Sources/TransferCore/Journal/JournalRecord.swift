import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// One line of the journal: `<seq> <op> <key> <len> <crc> <value>\n`.
///
/// `op` is `P` (put: the key now holds the value) or `D` (delete: the key is gone, no value).
/// `crc` is the CRC-32C, as 8 lowercase hex digits, of the bytes `<seq> <op> <key> <len> `
/// followed by the value. Each record is verifiable on its own, and sequence numbers strictly
/// increase through the file, across compactions too.
struct JournalRecord: Equatable, Sendable {
    enum Operation: UInt8, Sendable {
        case put = 0x50  // "P"
        case delete = 0x44  // "D"
    }

    var sequence: UInt64
    var operation: Operation
    var key: String
    /// The value's bytes (compact JSON, no newline); empty for a delete.
    var value: [UInt8]

    /// The largest sequence number a record may carry. No daemon writes 2^63 records, and the
    /// room above it means the numbers after the last one replayed never overflow: a journal
    /// damaged into a number near 2^64 is refused as damage instead of trapping at start-up.
    static let maxSequence = UInt64(Int64.max)

    /// Whether `key` may appear in a record: 1 to 200 bytes of `[A-Za-z0-9._:/-]`.
    static func isValidKey(_ key: String) -> Bool { isValidKey(bytes: key.utf8) }

    /// Whether the UTF-8 `bytes` make a key that may appear in a record.
    static func isValidKey(bytes: some Collection<UInt8>) -> Bool {
        guard (1...200).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: ":"), UInt8(ascii: "/"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }

    /// Appends the record's line to `output`.
    func encode(into output: inout [UInt8]) {
        value.withUnsafeBytes { Self.encode(sequence: sequence, operation: operation, key: key, value: $0, into: &output) }
    }

    /// Appends the line of a record made of these parts to `output`.
    static func encode(sequence: UInt64, operation: Operation, key: String, value: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        let headerStart = output.count
        output.append(contentsOf: "\(sequence) ".utf8)
        output.append(operation.rawValue)
        output.append(UInt8(ascii: " "))
        output.append(contentsOf: key.utf8)
        output.append(contentsOf: " \(value.count) ".utf8)
        var crc = CRC32C.checksum(output[headerStart...])
        crc = CRC32C.update(crc, value)
        for shift in stride(from: 24, through: 0, by: -8) { HexDigits.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)), to: &output) }
        output.append(UInt8(ascii: " "))
        output.append(contentsOf: value)
        output.append(UInt8(ascii: "\n"))
    }

    /// Why a line is not a valid record.
    enum DecodeFailure: Error, Equatable {
        /// No newline: the line was cut short.
        case incomplete
        case malformed(String)
        case checksumMismatch
    }

    /// Where one valid record lies in a buffer, without a copy of its value.
    struct Located: Equatable, Sendable {
        var sequence: UInt64
        var operation: Operation
        /// The key's bytes within the buffer (checked: `isValidKey`).
        var keyRange: Range<Int>
        /// The value's bytes within the buffer.
        var value: Range<Int>
        /// The offset just past the record's newline.
        var next: Int

        /// The key, read from `buffer` (the one the record was located in).
        func key(in buffer: UnsafeRawBufferPointer) -> String { String(decoding: buffer[keyRange], as: UTF8.self) }
    }

    /// Decodes the record starting at `start`; on success returns it and the offset just past its newline.
    static func decode(_ bytes: [UInt8], at start: Int) -> Result<(JournalRecord, Int), DecodeFailure> {
        bytes.withUnsafeBytes { buffer in
            locate(in: buffer, at: start).map { located in
                let record = JournalRecord(
                    sequence: located.sequence, operation: located.operation, key: located.key(in: buffer),
                    value: Array(buffer[located.value]))
                return (record, located.next)
            }
        }
    }

    /// Checks the record starting at `start` in `buffer` and says where it lies.
    static func locate(in buffer: UnsafeRawBufferPointer, at start: Int) -> Result<Located, DecodeFailure> {
        guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n"), from: start) else {
            return .failure(.incomplete)
        }
        // Five space-separated header fields, then the value (which may itself contain spaces).
        var fields: (Range<Int>, Range<Int>, Range<Int>, Range<Int>, Range<Int>) = (0..<0, 0..<0, 0..<0, 0..<0, 0..<0)
        var cursor = start
        for field in 0..<5 {
            guard let space = buffer.firstIndex(of: UInt8(ascii: " "), from: cursor, before: newline) else {
                return .failure(.malformed("expected 5 header fields, found \(field)"))
            }
            switch field {
            case 0: fields.0 = cursor..<space
            case 1: fields.1 = cursor..<space
            case 2: fields.2 = cursor..<space
            case 3: fields.3 = cursor..<space
            default: fields.4 = cursor..<space
            }
            cursor = space + 1
        }
        let value = cursor..<newline
        guard let sequence = UInt64(decimal: buffer[fields.0]) else { return .failure(.malformed("bad sequence number")) }
        guard sequence <= maxSequence else { return .failure(.malformed("sequence number out of range")) }
        guard fields.1.count == 1, let operation = Operation(rawValue: buffer[fields.1.lowerBound]) else {
            return .failure(.malformed("bad operation"))
        }
        // The key stays bytes here: start-up indexes a million of them without a string each.
        guard isValidKey(bytes: buffer[fields.2]) else { return .failure(.malformed("bad key")) }
        guard let length = UInt64(decimal: buffer[fields.3]), length == UInt64(value.count) else {
            return .failure(.malformed("length does not match the value"))
        }
        // Exactly 8 lowercase hex digits: the field is not itself covered by the checksum, so only
        // one spelling of each value may be accepted.
        guard fields.4.count == 8, let stored = Self.parseHex(buffer[fields.4]) else {
            return .failure(.malformed("bad checksum field"))
        }
        var crc = CRC32C.update(0, UnsafeRawBufferPointer(rebasing: buffer[start..<fields.4.lowerBound]))
        crc = CRC32C.update(crc, UnsafeRawBufferPointer(rebasing: buffer[value]))
        guard crc == stored else { return .failure(.checksumMismatch) }
        if operation == .delete && !value.isEmpty { return .failure(.malformed("a delete carries a value")) }
        return .success(Located(sequence: sequence, operation: operation, keyRange: fields.2, value: value, next: newline + 1))
    }

    private static func parseHex(_ digits: Slice<UnsafeRawBufferPointer>) -> UInt32? {
        var value: UInt32 = 0
        for digit in digits {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt32(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt32(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        return value
    }
}

extension UInt64 {
    /// Parses ASCII decimal digits, rejecting empty input, signs and leading zeros in longer numbers.
    init?(decimal bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
        if bytes.count > 1 && bytes.first == UInt8(ascii: "0") { return nil }
        var result: UInt64 = 0
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            result = sum
        }
        self = result
    }
}

extension UnsafeRawBufferPointer {
    /// The offset of the first `byte` at or after `start` (and before `end`), found with memchr.
    func firstIndex(of byte: UInt8, from start: Int, before end: Int? = nil) -> Int? {
        let end = Swift.min(end ?? count, count)
        guard let base = baseAddress, start < end, start >= 0 else { return nil }
        guard let found = memchr(base + start, Int32(byte), end - start) else { return nil }
        return UnsafeRawPointer(found) - base
    }
}
