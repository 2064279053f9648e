import Foundation
import Testing
@testable import TransferCore
@testable import TransferProtocol

/// `WireJSONEncoder` must write the very bytes `WireCoding.encoder()` (Foundation's `JSONEncoder`)
/// writes: journal records, answers and events go through it.
@Suite("The wire's JSON encoder")
struct WireJSONEncoderTests {
    private func expectSameBytes<T: Encodable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let expected = try WireCoding.encoder().encode(value)
        let written = Data(try WireJSONEncoder().bytes(value))
        #expect(
            String(decoding: written, as: UTF8.self) == String(decoding: expected, as: UTF8.self),
            sourceLocation: sourceLocation)
        #expect(try WireCoding.encode(value) == expected, sourceLocation: sourceLocation)
    }

    static let awkwardStrings: [String] = [
        "", "plain", "/srv/a b/ü/🚀", "quote \" backslash \\ slash /", "line\nfeed\rreturn\ttab",
        String(decoding: (0..<0x20).map { UInt8($0) } + [0x7F], as: UTF8.self), "\u{2028}\u{2029}\u{FEFF}",
        "\u{8}\u{C}", "ends with \\",
    ]

    private static let time = Date(timeIntervalSince1970: 1_795_000_000.123)

    static func fullJob(_ text: String) -> Job {
        var job = Job(
            id: "a1b2c3", state: .waiting, url: "https://example.com/\(text)?x=1&y=/", destination: "/srv/\(text)",
            bytesReceived: 1 << 40, totalBytes: Int64.max, bytesPerSecond: 0, createdAt: time, startedAt: time,
            finishedAt: time.addingTimeInterval(0.5), attempts: 3,
            error: JobError(code: .httpStatus, message: "the server said \(text)", httpStatus: 503),
            nextAttemptAt: time, expectedSha256: String(repeating: "ab", count: 32), expectedSize: 0,
            sha256: String(repeating: "0f", count: 32), finalUrl: "https://mirror/\(text)", overwrite: true,
            headerNames: ["Authorization", text, "X-Api-Key"], owner: UInt32.max, session: text)
        job.contentEncoding = "gzip"
        job.kind = .upload
        job.source = text
        job.method = "PUT"
        job.bytesSent = -1
        job.response = UploadResponse(
            status: 201, location: "/up/\(text)", etag: "\"e\"", contentType: "application/json", body: text,
            bodyEncoding: "utf8", bodyTruncated: false)
        job.uploadProtocol = .tus
        job.uploadUrl = "http://127.0.0.1:1/files/\(text)"
        job.notBefore = time
        job.deadline = Date(timeIntervalSince1970: 0)
        job.paused = true
        job.priority = .background
        job.limitRate = 1
        job.segments = 4
        job.connections = 1
        job.connectionsReason = Job.ConnectionsReason.rangesRefused
        job.pacedRate = Int64.min
        job.warning = text
        job.label = text
        job.inbox = false
        job.unchanged = true
        return job
    }

    @Test(arguments: awkwardStrings)
    func jobsEventsAndAnswersAreWrittenAsJSONEncoderWritesThem(text: String) throws {
        let job = Self.fullJob(text)
        try expectSameBytes(job)
        try expectSameBytes(Job(id: text, state: .queued, url: text, destination: text, createdAt: Self.time, owner: 0))
        try expectSameBytes(JobEvent(subscription: 3, seq: UInt64.max, type: .completed, time: Self.time, job: job))
        try expectSameBytes(RPCSuccess(id: .string(text), result: [job, job]))
        try expectSameBytes(RPCSuccess(id: .number(-7), result: CaughtUp(subscription: 1, replayed: 0, seq: 9)))
        try expectSameBytes(RPCSuccess(id: .null, result: Disconnect(reason: text, message: text)))
        try expectSameBytes(RPCNotification(method: NotificationMethod.event, params: JobEvent(seq: 1, type: .progress, time: Self.time, job: job)))
    }

    @Test(arguments: awkwardStrings)
    func journalRecordsAreWrittenAsJSONEncoderWritesThem(text: String) throws {
        var record = JobRecord(
            id: text, order: UInt64.max, state: .running, url: "http://h/\(text)", destination: "/d/\(text)",
            headers: ["Authorization": "Bearer \(text)", "camelCaseName": text, text: "v", "X-Y": ""],
            overwrite: false, owner: 1000, idChosenByClient: true, createdAt: Self.time, attempts: 2,
            checkpointBytes: 12345, totalBytes: nil, partialInode: UInt64.max)
        try expectSameBytes(record)
        record.ownerGroup = 100
        record.startedAt = Self.time
        record.finishedAt = Self.time
        record.error = JobError(code: .digestMismatch, message: text)
        record.validator = "W/\"\(text)\""
        record.expectedSha256 = text
        record.expectedSize = 7
        record.retry = RetryLimits(
            maxAttempts: 5, maxTimeSeconds: 315_360_000, idleTimeoutSeconds: 0.5, lowSpeedBytesPerSecond: 10_000,
            lowSpeedSeconds: 1e-7)
        record.nextAttemptAt = Self.time
        record.sha256 = text
        record.finalUrl = text
        record.contentEncoding = text
        record.failuresInARow = 0
        record.furthestBytes = 99
        record.session = text
        record.eventSeq = 42
        try expectSameBytes(record)
    }

    @Test func numbersCollectionsAndEmptyValuesAreWrittenAsJSONEncoderWritesThem() throws {
        try expectSameBytes([Int.min, Int.max, 0, -1])
        try expectSameBytes([UInt64.max])
        try expectSameBytes([0.0, -0.0, 1.0, 0.5, 1e20, 1e21, 1e-7, 123.456, 2.5e-300, Double.greatestFiniteMagnitude])
        try expectSameBytes([Float(1.5), Float(3.0), Float(1e-3)])
        try expectSameBytes([[String: Int]](), )
        try expectSameBytes(["outer": ["innerKey": [1, 2]], "b": [:]])
        try expectSameBytes([[Int?]]([[1, nil], [], [nil]]))
        try expectSameBytes(["someCamelKey": true, "some_snake": false])
        try expectSameBytes(RetryLimits())
        try expectSameBytes(Optional<Int>.none)
        try expectSameBytes("top-level \u{1}")
        try expectSameBytes(Self.time)
    }

    @Test func whatItDoesNotWriteGoesToJSONEncoder() throws {
        struct Odd: Encodable {
            var blob = Data([0, 1, 2, 250])
            var link = URL(string: "https://example.com/a b")
            var amount = Decimal(string: "1.25")
        }
        #expect(throws: WireJSONEncoder.Unsupported.self) { try WireJSONEncoder().bytes(Odd()) }
        #expect(try WireCoding.encode(Odd()) == (try WireCoding.encoder().encode(Odd())))
        #expect(throws: WireJSONEncoder.Unsupported.self) { try WireJSONEncoder().bytes([Double.nan]) }
        #expect(throws: (any Error).self) { try WireCoding.encode([Double.infinity]) }
    }
}
