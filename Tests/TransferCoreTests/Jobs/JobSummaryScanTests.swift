import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// Start-up reads a finished job's summary from its JSON without decoding the record.
@Suite("Job summaries read from the journal's JSON")
struct JobSummaryScanTests {
    private func record(state: JobState, session: String? = nil, headers: [String: String] = [:], finished: Bool = true) -> JobRecord {
        var job = JobRecord(
            id: "job-\(state.rawValue)", order: 4_000_000_123, state: state, url: "https://example.com/a \"quoted\" \\ path",
            destination: "/srv/files/a{b}[c]", headers: headers, overwrite: false, owner: 4_294_967_294, ownerGroup: 7,
            idChosenByClient: true, createdAt: Date(timeIntervalSince1970: 1_795_000_000.123), attempts: 3, checkpointBytes: 99)
        job.finishedAt = finished ? Date(timeIntervalSince1970: 1_795_000_100.5) : nil
        job.session = session
        job.eventSeq = finished ? 77 : nil
        job.acknowledged = session == nil ? nil : true
        job.hookPending = state == .failed ? true : nil
        job.error = state == .failed ? JobError(code: .httpStatus, message: "the server said \"no\" {really}", httpStatus: 404) : nil
        job.retry = RetryLimits(maxAttempts: 3)
        return job
    }

    @Test(arguments: [JobState.completed, .failed, .cancelled, .queued])
    func theScanAgreesWithTheDecodedRecord(state: JobState) throws {
        let jobs = [
            record(state: state), record(state: state, session: "nightly"),
            record(state: state, headers: ["Authorization": "Bearer \"x\"", "X-A": "}"], finished: false),
        ]
        for job in jobs {
            let json = try WireCoding.encoder().encode(job)
            let scanned = try #require(json.withUnsafeBytes { JobSummaryScan.summary(of: $0) })
            let decoded = FinishedJob(try WireCoding.decoder().decode(JobRecord.self, from: json))
            #expect(abs(scanned.createdAt - decoded.createdAt) < 0.000_5 && abs((scanned.finishedAt ?? 0) - (decoded.finishedAt ?? 0)) < 0.000_5)
            var same = scanned
            same.createdAt = decoded.createdAt
            same.finishedAt = decoded.finishedAt
            #expect(same == decoded, "\(String(decoding: json, as: UTF8.self))")
        }
    }

    @Test func aRecordReadsBackFromTheJournalAsItWasWritten() throws {
        var job = record(state: .completed, session: "s", headers: ["A": "b"])
        job.createdAt = Date(timeIntervalSince1970: 1_795_000_000.5)
        job.startedAt = Date(timeIntervalSince1970: 1_795_000_001.25)
        job.finishedAt = Date(timeIntervalSince1970: 1_795_000_002)
        job.finalUrl = "https://mirror.example/a"
        job.validator = "\"etag\""
        job.partialInode = 42
        job.totalBytes = 99
        job.sha256 = String(repeating: "ab", count: 32)
        job.expectedSha256 = job.sha256
        job.expectedSize = 99
        job.failuresInARow = 2
        job.furthestBytes = 50
        job.nextAttemptAt = Date(timeIntervalSince1970: 1_795_000_003)
        let decoded = try WireCoding.decoder().decode(JobRecord.self, from: try WireCoding.encoder().encode(job))
        #expect(decoded == job)
    }

    @Test func whatTheEncoderDoesNotWriteIsLeftToTheDecoder() {
        for text in [
            "", "{}", "{", #"{"order":1,"owner":2,"state":"completed"}"#, #"{"order":1,"owner":2,"state":"done","created_at":"2026-11-22T10:00:00.000Z"}"#,
            #"{"order":1,"owner":2,"state":"completed","created_at":"2026-11-22T10:00:00.000Z","session":"a\"b"}"#,
            #"{"order":1,"owner":2,"state":"completed","created_at":"2026-11-22T10:00:00.000Z"} trailing"#,
            #"{"order":-1,"owner":2,"state":"completed","created_at":"2026-11-22T10:00:00.000Z"}"#,
            #"{"order":1,"owner":99999999999,"state":"completed","created_at":"2026-11-22T10:00:00.000Z"}"#,
            #"{"order":1,"owner":2,"state":"completed","created_at":"2026-11-22T10:00:00.000Z","x":[1,{"y":"]"}"#,
        ] {
            #expect(Array(text.utf8).withUnsafeBytes { JobSummaryScan.summary(of: $0) } == nil, "\(text)")
        }
    }

    @Test func timesMatchFoundationsParser() {
        for text in ["2026-11-22T10:00:00.123Z", "1970-01-01T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "2100-03-01T00:00:00Z", "1969-12-31T23:59:59.500Z"] {
            let expected = WireCoding.parseTimestamp(text)?.timeIntervalSince1970
            let scanned = JobSummaryScan.time(text)
            #expect(expected != nil && scanned != nil && abs(scanned! - expected!) < 0.0005, "\(text): \(String(describing: scanned)) vs \(String(describing: expected))")
        }
    }
}
