public import Foundation

/// Where a job is in its life: `queued → running → completed | failed | cancelled`.
public enum JobState: String, Codable, Sendable, CaseIterable {
    case queued
    case running
    case completed
    case failed
    case cancelled

    /// Whether the job has finished and will not change again.
    public var isTerminal: Bool {
        switch self {
        case .completed, .failed, .cancelled: return true
        case .queued, .running: return false
        }
    }
}

/// Why a job failed: a stable code and a message that says what happened and what to do.
public struct JobError: Codable, Hashable, Sendable {
    /// A stable code such as `http_status`, `network`, `disk`, `size_mismatch`.
    public var code: String
    public var message: String
    /// The HTTP status, when the server's answer was the cause.
    public var httpStatus: Int?

    public init(code: String, message: String, httpStatus: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
    }
}

/// A transfer as clients see it. Header values are never included: only their names.
public struct Job: Codable, Hashable, Sendable {
    public var id: String
    public var state: JobState
    public var url: String
    public var destination: String
    /// Bytes written to the destination (or its partial file) so far.
    public var bytesReceived: Int64
    /// The total size, once the server has said it.
    public var totalBytes: Int64?
    /// The current transfer rate while running.
    public var bytesPerSecond: Int64?
    public var createdAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    /// How many times a transfer was started for this job.
    public var attempts: Int
    public var error: JobError?
    public var overwrite: Bool
    /// The names of the request headers the job sends; their values stay private.
    public var headerNames: [String]
    /// The uid of the user who submitted the job.
    public var owner: UInt32

    public init(
        id: String, state: JobState, url: String, destination: String,
        bytesReceived: Int64 = 0, totalBytes: Int64? = nil, bytesPerSecond: Int64? = nil,
        createdAt: Date, startedAt: Date? = nil, finishedAt: Date? = nil,
        attempts: Int = 0, error: JobError? = nil, overwrite: Bool = false,
        headerNames: [String] = [], owner: UInt32
    ) {
        self.id = id
        self.state = state
        self.url = url
        self.destination = destination
        self.bytesReceived = bytesReceived
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.attempts = attempts
        self.error = error
        self.overwrite = overwrite
        self.headerNames = headerNames
        self.owner = owner
    }
}
