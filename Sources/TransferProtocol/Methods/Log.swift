public import Foundation

/// `log`: the attempts of one job, oldest first: when each ran, the bytes it ended with, how it
/// ended (the answer or the error) and the wait that followed. The daemon keeps the last
/// ``Log/keptAttempts`` of a job.
public enum Log: RPCMethod {
    public static let name = "log"
    /// How many attempts a job keeps in its log.
    public static let keptAttempts = 20

    public struct Params: Codable, Hashable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public var attempts: [AttemptRecord]
        /// Attempts older than those kept.
        public var omitted: Int?
        public init(job: Job, attempts: [AttemptRecord], omitted: Int? = nil) {
            self.job = job
            self.attempts = attempts
            self.omitted = omitted
        }
    }
}

/// One attempt of a job, as `log` shows it.
public struct AttemptRecord: Codable, Hashable, Sendable {
    /// How an attempt ended.
    public enum Outcome: String, Codable, Sendable, CaseIterable {
        /// The file landed, or the server accepted the upload.
        case completed
        /// A conditional download's server answered `304`: the file had not changed.
        case unchanged
        /// It failed and is retried at `next_attempt_at`.
        case retry
        /// It failed for good.
        case failed
        case cancelled
        case paused
        /// A background job gave its slot to a job of a higher class.
        case yielded
        /// The daemon stopped; the job continues after the restart.
        case stopped
    }

    /// The attempt's number (the job's `attempts` when it ran).
    public var attempt: Int
    public var startedAt: Date?
    public var endedAt: Date
    public var outcome: Outcome
    /// The bytes the job held when the attempt ended (received, or sent for an upload).
    public var bytes: Int64
    public var code: JobErrorCode?
    public var httpStatus: Int?
    /// The error's message, at most 300 characters.
    public var message: String?
    /// When the next attempt was due, after a `retry`.
    public var nextAttemptAt: Date?

    public init(
        attempt: Int, startedAt: Date?, endedAt: Date, outcome: Outcome, bytes: Int64, code: JobErrorCode? = nil, httpStatus: Int? = nil,
        message: String? = nil, nextAttemptAt: Date? = nil
    ) {
        self.attempt = attempt
        self.startedAt = startedAt
        self.endedAt = endedAt
        self.outcome = outcome
        self.bytes = bytes
        self.code = code
        self.httpStatus = httpStatus
        self.message = message
        self.nextAttemptAt = nextAttemptAt
    }
}
