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
        scan(json)?.summary
    }

    /// What start-up keeps of a job without decoding its record.
    enum Replayed {
        case finished(FinishedJob)
        /// With its URL's host, lowercased, as `JobRecord.hostKey` gives it.
        case queued(QueuedJob, host: String)
    }

    /// A finished job's summary; or a queued download's light form (`QueuedJob`), when its record
    /// holds only the members a download submitted and not yet started holds (`Member`). Nil
    /// otherwise (a start time, a yield, an upload, progress, its own limits…): the caller decodes it.
    static func replayed(of json: UnsafeRawBufferPointer) -> Replayed? {
        guard let fields = scan(json), let summary = fields.summary else { return nil }
        if summary.state.isTerminal { return .finished(summary) }
        guard let (job, host) = queued(fields, summary, json) else { return nil }
        return .queued(job, host: host)
    }

    static func queued(of json: UnsafeRawBufferPointer) -> (job: QueuedJob, host: String)? {
        guard case .queued(let job, let host) = replayed(of: json) else { return nil }
        return (job, host)
    }

    private static func queued(_ fields: Fields, _ summary: FinishedJob, _ json: UnsafeRawBufferPointer) -> (QueuedJob, String)? {
        guard fields.onlyLightMembers, summary.state == .queued, let destination = fields.destination.map({ text(json, $0) }),
            let url = fields.url.map({ text(json, $0) }), let host = QueuedJob.host(ofURL: url),
            let job = QueuedJob(summary: summary, destination: destination, priority: fields.priority ?? .normal, position: fields.position, paused: fields.paused)
        else { return nil }
        return (job, host)
    }

    /// What one pass over a record's members found.
    private struct Fields {
        var order: UInt64?
        var owner: UInt32?
        var state: JobState?
        var createdAt: Double?
        var finishedAt: Double?
        var eventSeq: UInt64?
        var acknowledged = false
        var hookPending = false
        var session: String?
        /// Where the destination and URL lie: only a queued job's become Strings.
        var destination: Range<Int>?
        var url: Range<Int>?
        var priority: JobPriority?
        var position: Int64?
        var paused = false
        /// False once a member a light queued job does not hold was seen.
        var onlyLightMembers = true

        var summary: FinishedJob? {
            guard let order, let owner, let state, let createdAt else { return nil }
            return FinishedJob(
                order: order, createdAt: createdAt, finishedAt: finishedAt, eventSeq: eventSeq, owner: owner, state: state,
                acknowledged: acknowledged, hookPending: hookPending, session: session)
        }
    }

    private static func scan(_ json: UnsafeRawBufferPointer) -> Fields? {
        var scanner = Scanner(bytes: json)
        var fields = Fields()
        func text(_ range: Range<Int>) -> String { Self.text(json, range) }
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        if scanner.take(UInt8(ascii: "}")) { return nil }
        repeat {
            // Keys are compared as bytes; only the strings a summary keeps become Strings.
            guard let key = scanner.plainString() else { return nil }
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            let member = Member(json, key)
            if member == nil { fields.onlyLightMembers = false }
            switch member {
            case .order: guard let value = scanner.unsigned() else { return nil }; fields.order = value
            case .owner: guard let value = scanner.unsigned(), value <= UInt32.max else { return nil }; fields.owner = UInt32(value)
            case .eventSeq: guard let value = scanner.unsigned() else { return nil }; fields.eventSeq = value
            case .state: guard let value = scanner.plainString().flatMap({ Self.state(json, $0) }) else { return nil }; fields.state = value
            case .createdAt: guard let value = scanner.plainString().flatMap({ Self.time(json, $0) }) else { return nil }; fields.createdAt = value
            case .finishedAt: guard let value = scanner.plainString().flatMap({ Self.time(json, $0) }) else { return nil }; fields.finishedAt = value
            case .session: guard let value = scanner.plainString() else { return nil }; fields.session = text(value)
            case .acknowledged: guard let value = scanner.bool() else { return nil }; fields.acknowledged = value
            case .hookPending: guard let value = scanner.bool() else { return nil }; fields.hookPending = value
            case .paused: guard let value = scanner.bool() else { return nil }; fields.paused = value
            case .position: guard let value = scanner.signed() else { return nil }; fields.position = value
            case .priority:
                guard let value = scanner.plainString().flatMap({ JobPriority(rawValue: text($0)) }) else { return nil }
                fields.priority = value
            case .destination, .url:
                // A string with escapes is left to the decoder: a summary does not need it.
                let start = scanner.position
                if let value = scanner.plainString() {
                    if member == .destination { fields.destination = value } else { fields.url = value }
                } else {
                    scanner.position = start
                    guard scanner.skipValue() else { return nil }
                    fields.onlyLightMembers = false
                }
            case .attempts, .checkpointBytes, .detached, .headers, .id, .idChosenByClient, .overwrite, .ownerGroup, .label, nil:
                guard scanner.skipValue() else { return nil }
            }
        } while scanner.take(UInt8(ascii: ","))
        guard scanner.take(UInt8(ascii: "}")), scanner.atEnd else { return nil }
        return fields
    }

    /// The members a scan reads, and the others a light queued job may hold: any other member
    /// makes the caller decode the record.
    private enum Member: CaseIterable {
        case order, owner, eventSeq, state, createdAt, finishedAt, session, acknowledged, hookPending
        case destination, url, priority, position, paused
        case attempts, checkpointBytes, detached, headers, id, idChosenByClient, overwrite, ownerGroup, label

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
            case .destination: "destination"
            case .url: "url"
            case .priority: "priority"
            case .position: "position"
            case .paused: "paused"
            case .attempts: "attempts"
            case .checkpointBytes: "checkpoint_bytes"
            case .detached: "detached"
            case .headers: "headers"
            case .id: "id"
            case .idChosenByClient: "id_chosen_by_client"
            case .overwrite: "overwrite"
            case .ownerGroup: "owner_group"
            case .label: "label"
            }
        }

        /// The members by the length of their names: a key is compared with those of its length only.
        private static let byLength: [[Member]] = {
            var table = [[Member]](repeating: [], count: 1 + allCases.map(\.name.utf8CodeUnitCount).reduce(0, max))
            for member in allCases { table[member.name.utf8CodeUnitCount].append(member) }
            return table
        }()

        init?(_ json: UnsafeRawBufferPointer, _ key: Range<Int>) {
            guard key.count < Self.byLength.count, let member = Self.byLength[key.count].first(where: { JobSummaryScan.equal(json, key, $0.name) })
            else { return nil }
            self = member
        }
    }

    static func text(_ json: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: json[range]), as: UTF8.self)
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
            guard take(UInt8(ascii: "\"")), let base = bytes.baseAddress else { return nil }
            let start = position
            // Every record's URL and destination pass here: read as plain bytes, not optionals.
            while position < bytes.count {
                let byte = base.load(fromByteOffset: position, as: UInt8.self)
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

        mutating func signed() -> Int64? {
            let negative = take(UInt8(ascii: "-"))
            guard let magnitude = unsigned() else { return nil }
            if negative { return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil }
            return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
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
