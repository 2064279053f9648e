import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

@Suite struct AttemptHistoryTests {
    func record() -> JobRecord {
        JobRecord(
            id: "a", order: 1, state: .running, url: "http://h/a", destination: "/tmp/a", headers: [:], overwrite: false, owner: 0,
            idChosenByClient: false, createdAt: Date(), attempts: 0, checkpointBytes: 0)
    }

    @Test func theLastAttemptsAreKeptAndTheOlderCounted() {
        var job = record()
        for attempt in 1...(Log.keptAttempts + 5) {
            job.attempts = attempt
            job.attemptStartedAt = Date()
            job.checkpointBytes = Int64(attempt)
            job.logAttempt(.retry, error: JobError(code: .connectionLost, message: String(repeating: "x", count: 1000)))
        }
        #expect(job.history?.count == Log.keptAttempts)
        #expect(job.historyOmitted == 5)
        #expect(job.history?.first?.attempt == 6)
        #expect(job.history?.last?.bytes == Int64(Log.keptAttempts + 5))
        #expect(job.history?.last?.message?.count == 300, "messages are bounded")
        #expect(job.attemptStartedAt == nil)
    }

    @Test func aJobWithNoAttemptRunningLogsNothing() {
        var job = record()
        job.logAttempt(.cancelled)
        #expect(job.history == nil)
    }
}
