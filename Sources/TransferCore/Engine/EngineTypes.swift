public import Foundation
public import Logging
public import TransferProtocol

/// How the engine transfers and protects memory and data.
public struct EngineConfiguration: Sendable {
    /// At most this many bytes received before a crash are fetched again after it (a checkpoint
    /// starts every half of it)…
    public var checkpointBytes: Int64 = 8 << 20
    /// …or after this many seconds, whichever comes first.
    public var checkpointInterval: Duration = .seconds(2)
    /// Pause a transfer (cancel it, then continue with a ranged request) once this many 16 KiB
    /// units of received chunks wait for the disk (`EngineQueues.delegateBacklog`): this bounds
    /// buffered bytes.
    public var backlogHighWater = 512
    /// Continue a paused transfer once the backlog is down to this.
    public var backlogLowWater = 64
    /// Bounds of the ranged segments asked for at once: a request queues at most a segment in
    /// memory. Segments grow while the disk keeps up and shrink when chunks pile up.
    public var segmentBytes: ClosedRange<Int64> = (4 << 20)...(16 << 20)
    /// Give up on a connection that delivers nothing for this long.
    public var idleTimeout: TimeInterval = 60
    /// Redirects followed per request before the transfer fails.
    public var maxRedirects = 10
    /// How many connections to one host may be open at once.
    public var maximumConnectionsPerHost = 6
    /// Bytes of an upload's response body kept in the job (`upload_response_body_bytes`).
    public var uploadResponseBodyBytes = 64 << 10
    /// Bytes in one append of a resumable upload (tus, IETF): each is read into memory once, and
    /// at most this much is sent again after an interruption.
    public var uploadSegmentBytes: Int64 = 8 << 20
    /// A delay added to every chunk written, to make the disk look slow in tests. Zero in production.
    public var writeDelayMicroseconds: UInt32 = 0

    public init() {}
}

/// What a transfer does: fetch the URL into the destination, or send a file (its spool copy) to the URL.
public enum TransferKind: Sendable {
    case download
    case upload(UploadPlan)
}

/// One transfer for the engine to run.
public struct TransferRequest: Sendable {
    public var jobID: String
    public var url: URL
    public var headers: [String: String]
    public var destination: String
    public var partialPath: String
    public var overwrite: Bool
    /// Bytes of the partial file known to be good; the engine continues after them when it can.
    public var resumeFrom: Int64
    /// The validator seen before, sent as If-Range when resuming.
    public var validator: String?
    /// The total size seen before, which a resumed answer must agree with.
    public var totalBytes: Int64?
    /// The SHA-256 the client expects, lowercase hex.
    public var expectedSha256: String?
    /// The size the client expects.
    public var expectedSize: Int64?
    /// Idle timeout and low-speed limit of each attempt.
    public var limits: EffectiveRetryLimits
    /// When the job runs out of time: a transfer still running then fails.
    public var deadline: Date?
    /// Bytes to leave free on the destination's filesystem: a download that would eat into them
    /// waits for space instead of starting.
    public var diskReserveBytes: Int64
    /// Where the destination may be: its directory is opened from one of these roots without
    /// following a symbolic link when the transfer starts, and the transfer works inside it.
    public var allowedRoots: AllowedRoots
    /// Who the download is for; nil for the daemon's own user. Decides the access check at start
    /// and, when the daemon runs as root, who owns the file.
    public var owner: DownloadOwner?
    /// A download, or an upload with what to send and how.
    public var kind: TransferKind = .download
    /// The job's own rate limit in bytes per second (`limit_rate`); nil: none.
    public var limitRate: Int64?
    /// The shared limits the transfer falls under besides the global one.
    public var bandwidthClass: BandwidthClass = .normal
    /// Connections that may fetch disjoint ranges of the file at once (1: one after the other).
    public var segments = 1
    /// CA certificates (PEM) the job trusts besides the daemon's.
    public var cacert: String?
    /// Ask whether the destination changed first (`conditional`); the headers that ask, read from
    /// the destination when the attempt starts from byte 0.
    public var conditional = false
    var conditionalHeaders: [String: String] = [:]
    /// Ranges past `resumeFrom` durable in the partial file from earlier attempts (of `validator`).
    public var parts: [ByteRange] = []
    /// Logs about this transfer: carries the job id (and the attempt number) as metadata, so each
    /// line joins the job's story (`TRANSFER_JOB_ID=` in the journal).
    public var logger: Logger

    public init(
        jobID: String, url: URL, headers: [String: String], destination: String, partialPath: String,
        overwrite: Bool, resumeFrom: Int64 = 0, validator: String? = nil, totalBytes: Int64? = nil,
        expectedSha256: String? = nil, expectedSize: Int64? = nil,
        limits: EffectiveRetryLimits = RetryPolicy().limits(for: nil), deadline: Date? = nil, diskReserveBytes: Int64 = 0,
        allowedRoots: AllowedRoots, owner: DownloadOwner? = nil, logger: Logger
    ) {
        self.logger = logger
        self.allowedRoots = allowedRoots
        self.owner = owner
        self.diskReserveBytes = diskReserveBytes
        self.expectedSha256 = expectedSha256
        self.expectedSize = expectedSize
        self.limits = limits
        self.deadline = deadline
        self.jobID = jobID
        self.url = url
        self.headers = headers
        self.destination = destination
        self.partialPath = partialPath
        self.overwrite = overwrite
        self.resumeFrom = resumeFrom
        self.validator = validator
        self.totalBytes = totalBytes
    }
}

/// What the engine reports about a transfer, in order per job.
public enum EngineEvent: Sendable {
    /// The server answered: the size when known, the validator to resume with, the offset
    /// the body starts at (0 when the transfer starts over), and the partial file's inode (which
    /// the landed file keeps, so a restart can tell that a landing finished before a crash).
    /// `generation` counts how often this run cut the partial file back to 0. `finalURL` is where
    /// redirects led, when they did; `contentEncoding` the coding of the bytes as sent, when the
    /// server used one although asked not to; `rangesRefused` whether the server showed it does
    /// not take ranges (so a download that asked for several connections gets one).
    case responded(
        jobID: String, totalBytes: Int64?, validator: String?, startOffset: Int64, partialInode: UInt64, generation: Int,
        finalURL: String?, contentEncoding: String? = nil, rangesRefused: Bool = false)
    /// The partial file holds at least `bytes` bytes durably, of the contents begun at `generation`;
    /// a checkpoint of an older generation than the last `responded` must be ignored.
    /// `parts` are the ranges past `bytes` durable as well (a download over several connections).
    case checkpoint(jobID: String, bytes: Int64, parts: [ByteRange], generation: Int)
    /// The file is at its destination, synced; `sha256` is its digest, lowercase hex.
    case completed(jobID: String, bytes: Int64, sha256: String)
    /// An upload was answered with a 2xx after `bytes` were sent.
    case uploaded(jobID: String, bytes: Int64, response: UploadResponse)
    /// A resumable upload learned its protocol, its upload resource, or how many bytes the server
    /// holds (`offset`); the core keeps them for the next attempt.
    case uploadProgressed(jobID: String, protocolUsed: UploadProtocol, resource: String?, offset: Int64)
    /// The transfer failed for good; its partial file is gone.
    case failed(jobID: String, error: JobError)
    /// The attempt failed in a way worth retrying; the partial file is kept with `kept.bytes`
    /// durable. `retryAfter` is the server's requested wait in seconds, when it gave one.
    case interrupted(jobID: String, error: JobError, kept: StoppedTransfer, retryAfter: Double?)
    /// The transfer stopped on request (cancel, pause or shutdown); `bytes` are durable in the partial
    /// file when it was kept.
    case stopped(jobID: String, bytes: Int64, reason: StopReason)
    /// A conditional download's server answered `304`: the destination is as it was.
    case unchanged(jobID: String)

    public var jobID: String {
        switch self {
        case .responded(let id, _, _, _, _, _, _, _, _), .checkpoint(let id, _, _, _), .completed(let id, _, _),
            .failed(let id, _), .interrupted(let id, _, _, _), .stopped(let id, _, _), .uploaded(let id, _, _),
            .uploadProgressed(let id, _, _, _), .unchanged(let id):
            return id
        }
    }
}

/// What a cancel request found.
public enum CancelOutcome: Sendable, Equatable {
    /// The transfer is stopping; its partial file will be removed.
    case cancelled
    /// The file is complete and being moved into place: it will complete.
    case landing
    /// The engine is not running that transfer: it has just ended, or its end is on its way (it
    /// failed or was interrupted, or a stop came first).
    case notRunning
}

/// What a request to stop one transfer (to pause it) found.
public enum StopOutcome: Sendable, Equatable {
    /// The transfer is stopping with its partial file synced; `.stopped` reports how far it got.
    case stopping
    /// The file is complete and being moved into place: it will complete.
    case landing
    /// The engine is not running that transfer (it has just ended, or is stopping already).
    case notRunning
}

/// How far a transfer got when the engine stopped it for shutdown: what a resume needs.
public struct StoppedTransfer: Sendable, Equatable {
    /// Bytes durable in the partial file.
    public var bytes: Int64
    public var validator: String?
    public var totalBytes: Int64?
    /// Ranges past `bytes` durable as well (a download over several connections).
    public var parts: [ByteRange]

    public init(bytes: Int64, validator: String?, totalBytes: Int64?, parts: [ByteRange] = []) {
        self.parts = parts
        self.bytes = bytes
        self.validator = validator
        self.totalBytes = totalBytes
    }
}

/// Why an attempt ended early, and whether trying again may help.
struct TransferFailure: Sendable, Equatable {
    var error: JobError
    /// Whether a later attempt may succeed (network trouble, an overloaded server, a full disk).
    var retryable: Bool
    /// The server's requested wait, in seconds.
    var retryAfter: Double?

    static func permanent(_ error: JobError) -> TransferFailure { TransferFailure(error: error, retryable: false) }
    static func transient(_ error: JobError, retryAfter: Double? = nil) -> TransferFailure {
        TransferFailure(error: error, retryable: true, retryAfter: retryAfter)
    }
}

/// Live progress of a running transfer.
public struct TransferProgress: Sendable {
    public var bytes: Int64
    public var bytesPerSecond: Int64
    /// The rate the transfer is paced at now (its own limit or its share of a shared one); nil: none.
    public var pacedRate: Int64? = nil
    /// Whether a limit applies but cannot be held: the server ignores ranges, so the body comes in
    /// one request that cannot be paced.
    public var limitUnheld = false
}

/// What an interrupted transfer leaves in memory for its next attempt in this run.
struct SuspendedDigest: Sendable {
    var bytes: Int64
    var inode: UInt64
    var digest: FileDigest
    var announcedDigest: AnnouncedDigest?
}

/// Bytes `start..<end` of a file.
public struct ByteRange: Codable, Sendable, Equatable, Hashable {
    public var start: Int64
    public var end: Int64

    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }

    public var count: Int64 { end - start }
}

/// A resumable upload's resource to drop, and how to ask.
public struct UploadTermination: Sendable {
    public var jobID: String
    public var resource: URL
    public var protocolUsed: UploadProtocol
    /// The job's own request headers (credentials among them), as its appends carried them.
    public var headers: [String: String]
    /// The job's URL: its credentials go only to its origin (nil: to none).
    public var jobURL: URL?
    /// The job's own CA certificates (`cacert`), trusted for the DELETE as for its appends.
    public var cacert: String?
    public var logger: Logger

    public init(
        jobID: String, resource: URL, protocolUsed: UploadProtocol, headers: [String: String], jobURL: URL?, cacert: String? = nil,
        logger: Logger
    ) {
        self.jobID = jobID
        self.resource = resource
        self.cacert = cacert
        self.protocolUsed = protocolUsed
        self.headers = headers
        self.jobURL = jobURL
        self.logger = logger
    }
}

/// Why the core asked the engine to stop a running transfer: what its end means for the job.
public enum StopReason: String, Sendable, Equatable {
    /// A user's pause: the job stays queued and paused, from the bytes it kept.
    case pause
    /// A background transfer gives its slot up to a foreground or normal job: queued again at the
    /// front of its class.
    case yield
    /// A cancel: the job's record was written as cancelled by `cancel`.
    case cancel
    /// The daemon stops: the job stays running in the journal and resumes after the restart.
    case shutdown
}
