public import Foundation

/// Where a job is in its life: `queued → running → completed | failed | cancelled`, with
/// `running → waiting → queued` after a failure that is worth retrying.
public enum JobState: String, Codable, Sendable, CaseIterable {
    case queued
    case running
    /// A transient failure (network, server overload, full disk): the job retries at `next_attempt_at`.
    case waiting
    case completed
    case failed
    case cancelled

    /// Whether the job has finished and will not change again.
    public var isTerminal: Bool {
        switch self {
        case .completed, .failed, .cancelled: return true
        case .queued, .running, .waiting: return false
        }
    }
}

/// Why a job failed: a stable code and a message that says what happened and what to do.
///
/// A code this version does not know (from a newer daemon, or a journal record a newer version
/// wrote) does not fail decoding: ``code`` is then ``JobErrorCode/unrecognized`` and ``rawCode``
/// keeps the string, which encoding writes back unchanged.
public struct JobError: Codable, Hashable, Sendable {
    /// What went wrong; ``JobErrorCode/unrecognized`` for a code this version does not know.
    public var code: JobErrorCode {
        get { JobErrorCode(rawValue: rawCode) ?? .unrecognized }
        set { rawCode = newValue.rawValue }
    }
    /// The code as the wire spells it (`http_status`), also when this version does not know it.
    public private(set) var rawCode: String
    public var message: String
    /// The HTTP status, when the server's answer was the cause.
    public var httpStatus: Int?

    public init(code: JobErrorCode, message: String, httpStatus: Int? = nil) {
        self.rawCode = code.rawValue
        self.message = message
        self.httpStatus = httpStatus
    }

    private enum CodingKeys: String, CodingKey {
        case rawCode = "code"
        case message
        case httpStatus
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
    /// Why the job failed; while `waiting`, the failure it waits to retry.
    public var error: JobError?
    /// While `waiting`: when the next attempt starts.
    public var nextAttemptAt: Date?
    /// The SHA-256 (lowercase hex) the client expects; the job fails if the file differs.
    public var expectedSha256: String?
    /// The size the client expects; the job fails if the server's differs.
    public var expectedSize: Int64?
    /// The file's SHA-256 (lowercase hex), once completed.
    public var sha256: String?
    /// The URL the last answer came from, when redirects led elsewhere (credentials removed).
    public var finalUrl: String?
    /// The content coding the server sent the body in although asked for `identity` (`gzip`…):
    /// the file holds the bytes as sent, as curl and wget save them.
    public var contentEncoding: String?
    public var overwrite: Bool
    /// The names of the request headers the job sends; their values stay private.
    public var headerNames: [String]
    /// The uid of the user who submitted the job.
    public var owner: UInt32
    /// The client session the job was submitted under, if any.
    public var session: String?
    /// `download` or `upload` (absent from daemons that only download).
    public var kind: JobKind?
    /// Uploads: the file as the submitter named it.
    public var source: String?
    /// Uploads: the HTTP method.
    public var method: String?
    /// Uploads: bytes sent in the current attempt (a plain upload starts again from 0 on a retry).
    public var bytesSent: Int64?
    /// Uploads, once completed: the server's answer.
    public var response: UploadResponse?
    /// Uploads: `plain`, `ietf` or `tus`, once the daemon knows which the server speaks.
    public var uploadProtocol: UploadProtocol?
    /// Resumable uploads: the upload resource the server created, which later attempts continue.
    public var uploadUrl: String?
    /// Not started before this time.
    public var notBefore: Date?
    /// Failed as `time_limit` if not done by this time.
    public var deadline: Date?
    /// True while the job is paused (`pause`): it keeps its place and partial file but does not
    /// start until resumed. Absent when not paused.
    public var paused: Bool?
    /// `foreground`, `normal` or `background`: always given by daemons that schedule by class;
    /// absent (read as `normal`) from older ones.
    public var priority: JobPriority?
    /// The job's own rate limit in bytes per second (`limit_rate`), when it has one.
    public var limitRate: Int64?
    /// Downloads fetched over more than one connection: how many (`segments`).
    public var segments: Int?
    /// Downloads that asked for several connections but use fewer: how many they use (1).
    public var connections: Int?
    /// Why `connections` is fewer than `segments`, in words (`ConnectionsReason`).
    public var connectionsReason: String?
    /// While running under a rate limit: the bytes per second it is paced at now (its own limit,
    /// or its share of the global or class limit).
    public var pacedRate: Int64?
    /// Something the job cannot do as asked, such as hold a rate limit on a server that ignores ranges.
    public var warning: String?
    /// The submitter's own text for the job (`label` in `submit`).
    public var label: String?
    /// A download submitted without a destination: its file is in the daemon's inbox, and the
    /// submitter gets it over the upload socket (`fetch`) until the job's end is acknowledged.
    public var inbox: Bool?
    /// A conditional download (`conditional`) whose server answered that the file had not
    /// changed (`304`): the job completed without replacing the destination.
    public var unchanged: Bool?

    public init(
        id: String, state: JobState, url: String, destination: String,
        bytesReceived: Int64 = 0, totalBytes: Int64? = nil, bytesPerSecond: Int64? = nil,
        createdAt: Date, startedAt: Date? = nil, finishedAt: Date? = nil,
        attempts: Int = 0, error: JobError? = nil, nextAttemptAt: Date? = nil,
        expectedSha256: String? = nil, expectedSize: Int64? = nil, sha256: String? = nil, finalUrl: String? = nil,
        overwrite: Bool = false, headerNames: [String] = [], owner: UInt32, session: String? = nil
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
        self.nextAttemptAt = nextAttemptAt
        self.expectedSha256 = expectedSha256
        self.expectedSize = expectedSize
        self.sha256 = sha256
        self.finalUrl = finalUrl
        self.overwrite = overwrite
        self.headerNames = headerNames
        self.owner = owner
        self.session = session
    }
}

extension Job {
    /// The reasons a download that asked for several connections uses one (`connections_reason`).
    public enum ConnectionsReason {
        /// The server answered a range with the whole file, or with ranges that cannot be trusted.
        public static let rangesRefused = "the server does not take ranges"
        /// A paced job is fetched as one sequence of ranged requests.
        public static let rateLimit = "a rate limit paces the job"
    }
}
