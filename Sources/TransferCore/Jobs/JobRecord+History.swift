import Foundation
import TransferProtocol

extension JobRecord {
    /// Adds how the running attempt ended to the job's log, keeping the last `Log.keptAttempts`.
    /// Nothing is added for a job with no attempt running (paused or cancelled while queued).
    mutating func logAttempt(_ outcome: AttemptRecord.Outcome, error: JobError? = nil, next: Date? = nil, now: Date = Date()) {
        guard attemptStartedAt != nil else { return }
        let bytes = isUpload ? checkpointBytes : checkpointBytes + (parts?.reduce(0) { $0 + $1.count } ?? 0)
        let record = AttemptRecord(
            attempt: attempts, startedAt: attemptStartedAt, endedAt: now, outcome: outcome, bytes: bytes, code: error?.code,
            httpStatus: error?.httpStatus, message: error.map { String($0.message.prefix(300)) }, nextAttemptAt: next)
        var kept = history ?? []
        kept.append(record)
        if kept.count > Log.keptAttempts {
            historyOmitted = (historyOmitted ?? 0) + kept.count - Log.keptAttempts
            kept.removeFirst(kept.count - Log.keptAttempts)
        }
        history = kept
        attemptStartedAt = nil
    }
}
