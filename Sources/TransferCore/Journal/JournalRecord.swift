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
    static func isValidKey(_ key: String) -> Bool {
        let bytes = key.utf8
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
        let headerStart = output.count
        output.append(contentsOf: "\(sequence) ".utf8)
        output.append(operation.rawValue)
        output.append(UInt8(ascii: " "))
        output.append(contentsOf: key.utf8)
        output.append(contentsOf: " \(value.count) ".utf8)
        var crc = CRC32C.checksum(output[headerStart...])
        crc = CRC32C.update(crc, value)
        output.append(contentsOf: Self.hex(crc))
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

    /// Decodes the record starting at `start`; on success returns it and the offset just past its newline.
    static func decode(_ bytes: [UInt8], at start: Int) -> Result<(JournalRecord, Int), DecodeFailure> {
        guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else {
            return .failure(.incomplete)
        }
        let line = bytes[start..<newline]
        // Five space-separated header fields, then the value (which may itself contain spaces).
        var fields: [ArraySlice<UInt8>] = []
        var cursor = line.startIndex
        while fields.count < 5 {
            guard let space = line[cursor...].firstIndex(of: UInt8(ascii: " ")) else {
                return .failure(.malformed("expected 5 header fields, found \(fields.count)"))
            }
            fields.append(line[cursor..<space])
            cursor = space + 1
        }
        let value = line[cursor...]
        guard let sequence = UInt64(decimal: fields[0]) else { return .failure(.malformed("bad sequence number")) }
        guard sequence <= maxSequence else { return .failure(.malformed("sequence number out of range")) }
        guard fields[1].count == 1, let operation = Operation(rawValue: fields[1][fields[1].startIndex]) else {
            return .failure(.malformed("bad operation"))
        }
        let key = String(decoding: fields[2], as: UTF8.self)
        guard isValidKey(key) else { return .failure(.malformed("bad key")) }
        guard let length = UInt64(decimal: fields[3]), length == UInt64(value.count) else {
            return .failure(.malformed("length does not match the value"))
        }
        // Exactly 8 lowercase hex digits: the field is not itself covered by the checksum, so only
        // one spelling of each value may be accepted.
        guard fields[4].count == 8, let stored = Self.parseHex(fields[4]) else {
            return .failure(.malformed("bad checksum field"))
        }
        var crc = CRC32C.checksum(bytes[start..<fields[4].startIndex])
        crc = CRC32C.update(crc, value)
        guard crc == stored else { return .failure(.checksumMismatch) }
        if operation == .delete && !value.isEmpty { return .failure(.malformed("a delete carries a value")) }
        let record = JournalRecord(sequence: sequence, operation: operation, key: key, value: Array(value))
        return .success((record, newline + 1))
    }

    private static func parseHex(_ digits: ArraySlice<UInt8>) -> UInt32? {
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

    private static func hex(_ value: UInt32) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return (0..<8).reversed().map { digits[Int((value >> (UInt32($0) * 4)) & 0xF)] }
    }
}

extension UInt64 {
    /// Parses ASCII decimal digits, rejecting empty input, signs and leading zeros in longer numbers.
    init?(decimal bytes: ArraySlice<UInt8>) {
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
