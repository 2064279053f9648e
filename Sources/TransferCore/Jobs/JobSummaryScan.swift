import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Reads a job record's summary straight from its JSON, without decoding the record: start-up
/// does this for every finished job, so replay costs in proportion to the unfinished ones.
///
/// It reads the top-level members the encoder writes (`WireCoding.encoder()`: compact, snake_case,
/// times as `2026-11-22T10:00:00.123Z`) and skips the rest. Anything else, such as an escaped
/// string where a summary field is, gives nil, and the caller decodes the record instead.
enum JobSummaryScan {
    static func summary(of json: UnsafeRawBufferPointer) -> FinishedJob? {
        var scanner = Scanner(bytes: json)
        var order: UInt64?
        var owner: UInt32?
        var state: JobState?
        var createdAt: Double?
        var finishedAt: Double?
        var eventSeq: UInt64?
        var acknowledged = false
        var hookPending = false
        var session: String?
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        if scanner.take(UInt8(ascii: "}")) { return nil }
        repeat {
            // Keys are compared as bytes, and only the session becomes a String: no allocation per member.
            guard let key = scanner.plainString() else { return nil }
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            switch Member(json, key) {
            case .order: guard let value = scanner.unsigned() else { return nil }; order = value
            case .owner: guard let value = scanner.unsigned(), value <= UInt32.max else { return nil }; owner = UInt32(value)
            case .eventSeq: guard let value = scanner.unsigned() else { return nil }; eventSeq = value
            case .state: guard let value = scanner.plainString().flatMap({ Self.state(json, $0) }) else { return nil }; state = value
            case .createdAt: guard let value = scanner.plainString().flatMap({ Self.time(json, $0) }) else { return nil }; createdAt = value
            case .finishedAt: guard let value = scanner.plainString().flatMap({ Self.time(json, $0) }) else { return nil }; finishedAt = value
            case .session:
                guard let value = scanner.plainString() else { return nil }
                session = String(decoding: UnsafeRawBufferPointer(rebasing: json[value]), as: UTF8.self)
            case .acknowledged: guard let value = scanner.bool() else { return nil }; acknowledged = value
            case .hookPending: guard let value = scanner.bool() else { return nil }; hookPending = value
            case nil: guard scanner.skipValue() else { return nil }
            }
        } while scanner.take(UInt8(ascii: ","))
        guard scanner.take(UInt8(ascii: "}")), scanner.atEnd, let order, let owner, let state, let createdAt else { return nil }
        return FinishedJob(
            order: order, createdAt: createdAt, finishedAt: finishedAt, eventSeq: eventSeq, owner: owner, state: state,
            acknowledged: acknowledged, hookPending: hookPending, session: session)
    }

    /// The members a summary reads.
    private enum Member: CaseIterable {
        case order, owner, eventSeq, state, createdAt, finishedAt, session, acknowledged, hookPending

        var name: StaticString {
            switch self {
            case .order: "order"
            case .owner: "owner"
            case .eventSeq: "event_seq"
            case .state: "state"
            case .createdAt: "created_at"
            case .finishedAt: "finished_at"
            case .session: "session"
            case .acknowledged: "acknowledged"
            case .hookPending: "hook_pending"
            }
        }

        init?(_ json: UnsafeRawBufferPointer, _ key: Range<Int>) {
            guard let member = Self.allCases.first(where: { JobSummaryScan.equal(json, key, $0.name) }) else { return nil }
            self = member
        }
    }

    static func equal(_ json: UnsafeRawBufferPointer, _ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount, let base = json.baseAddress else { return false }
        return memcmp(base + range.lowerBound, text.utf8Start, range.count) == 0
    }

    private static func state(_ json: UnsafeRawBufferPointer, _ range: Range<Int>) -> JobState? {
        for state in JobState.allCases where range.count == state.rawValue.utf8.count {
            if state.rawValue.utf8.elementsEqual(json[range]) { return state }
        }
        return nil
    }

    private static func time(_ json: UnsafeRawBufferPointer, _ range: Range<Int>) -> Double? {
        time(UnsafeRawBufferPointer(rebasing: json[range]))
    }

    /// Seconds since 1970 of `2026-11-22T10:00:00.123Z` (milliseconds optional), else of any
    /// time `WireCoding` reads.
    static func time(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBytes { time($0) }
    }

    static func time(_ digits: UnsafeRawBufferPointer) -> Double? {
        func parsed() -> Double? { WireCoding.parseTimestamp(String(decoding: digits, as: UTF8.self))?.timeIntervalSince1970 }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let digit = Int(digits[index]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard digits.count == 24 || digits.count == 20, digits[4] == 45, digits[7] == 45, digits[10] == 84, digits[13] == 58,
            digits[16] == 58, digits[digits.count - 1] == 90,
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else {
            return parsed()
        }
        var milliseconds = 0
        if digits.count == 24 {
            guard digits[19] == 46, let value = number(20..<23) else { return parsed() }
            milliseconds = value
        }
        // Days from 1970-01-01 to the date (proleptic Gregorian calendar).
        let shifted = month <= 2 ? year - 1 : year
        let era = shifted / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Double(days * 86_400 + hour * 3_600 + minute * 60 + second) + Double(milliseconds) / 1_000
    }

    /// A cursor over JSON bytes, with bounds checked at every step.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        var atEnd: Bool { position == bytes.count }

        private var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            position += 1
            return true
        }

        /// Where a string without escapes lies (quotes excluded), else nil.
        mutating func plainString() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while let byte = current {
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return start..<(position - 1)
                }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                position += 1
            }
            return nil
        }

        mutating func unsigned() -> UInt64? {
            let start = position
            var value: UInt64 = 0
            while let byte = current, (48...57).contains(byte) {
                let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - 48))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
                position += 1
            }
            return position > start ? value : nil
        }

        mutating func bool() -> Bool? {
            if literal("true") { return true }
            if literal("false") { return false }
            return nil
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count else { return false }
            for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
            position += count
            return true
        }

        /// Skips one value of any kind; false when the bytes are not JSON.
        mutating func skipValue() -> Bool {
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "\""): return skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["): return skipNested()
            case UInt8(ascii: "t"), UInt8(ascii: "f"): return bool() != nil
            case UInt8(ascii: "n"): return literal("null")
            default:
                let start = position
                while let byte = current, byte == 45 || byte == 43 || byte == 46 || byte == 69 || byte == 101 || (48...57).contains(byte) {
                    position += 1
                }
                return position > start
            }
        }

        private mutating func skipString() -> Bool {
            position += 1
            while let byte = current {
                position += 1
                if byte == UInt8(ascii: "\\") {
                    guard current != nil else { return false }
                    position += 1
                } else if byte == UInt8(ascii: "\"") {
                    return true
                }
            }
            return false
        }

        /// Skips an object or array, strings inside included, by counting brackets.
        private mutating func skipNested() -> Bool {
            var depth = 0
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        position += 1
                        return true
                    }
                default:
                    break
                }
                position += 1
            }
            return false
        }
    }
}
