/// What the core's scheduling and retention follow; the daemon may change it while running.
public struct CoreConfiguration: Sendable, Equatable {
    /// Transfers that run at once; the rest wait in submission order.
    public var maxConcurrentTransfers = 4
    /// Transfers to one host (the URL's host name) that run at once, while jobs to other hosts
    /// can start (`max_connections_per_host`).
    public var maxConnectionsPerHost = 2
    /// Connections a download uses for disjoint ranges of its file unless it asks otherwise (`segments`).
    public var segments = 1
    /// How long finished (completed, failed, cancelled) jobs stay visible before they are dropped.
    public var finishedJobRetention: Duration = .seconds(7 * 24 * 3600)
    /// How long a session's unacknowledged terminal events (and their jobs) are kept at most.
    public var eventRetention: Duration = .seconds(30 * 24 * 3600)
    /// Unfinished (queued, running, waiting) jobs one user may have.
    public var maxJobsPerUser = 10_000
    /// Journal bytes one user's jobs may hold, finished ones included (`journal_bytes_per_user`).
    public var journalBytesPerUser = Int.max

    /// Retry defaults for jobs that do not set their own limits.
    public var retry = RetryPolicy()
    /// Bytes always left free on a destination's filesystem.
    public var diskReserveBytes: Int64 = 64 << 20
    /// The directories downloads may land in (checked at submit and when each transfer starts).
    public var allowedRoots: AllowedRoots = .everywhere
    /// Where downloads without a destination land (nil: such a submit is refused), and how many
    /// bytes of them one user may hold there (`inbox_bytes_per_user`).
    public var inbox: Inbox?
    public var inboxBytesPerUser: Int64 = 8 << 30

    /// This configuration, with `previous`'s inbox when it names none (a reload keeps the inbox).
    func keepingInbox(of previous: CoreConfiguration) -> CoreConfiguration {
        var kept = self
        if kept.inbox == nil { kept.inbox = previous.inbox }
        return kept
    }

    public init(
        maxConcurrentTransfers: Int = 4, finishedJobRetention: Duration = .seconds(7 * 24 * 3600),
        retry: RetryPolicy = RetryPolicy(), diskReserveBytes: Int64 = 64 << 20,
        eventRetention: Duration = .seconds(30 * 24 * 3600), maxJobsPerUser: Int = 10_000, allowedRoots: AllowedRoots = .everywhere
    ) {
        self.allowedRoots = allowedRoots
        self.maxJobsPerUser = maxJobsPerUser
        self.eventRetention = eventRetention
        self.maxConcurrentTransfers = maxConcurrentTransfers
        self.finishedJobRetention = finishedJobRetention
        self.retry = retry
        self.diskReserveBytes = diskReserveBytes
    }
}

/// How many jobs are in each live state, for status lines.
public struct JobCounts: Sendable, Equatable {
    public var running: Int
    public var queued: Int
    /// Jobs waiting to retry after a transient failure.
    public var waiting: Int
    /// Every job kept, finished ones included.
    public var total: Int
    /// Unfinished jobs that are paused.
    public var paused: Int
    /// Whether the daemon-wide hold (root's `pause --all`) keeps new transfers from starting.
    public var held: Bool

    public init(running: Int, queued: Int, waiting: Int, total: Int, paused: Int = 0, held: Bool = false) {
        self.running = running
        self.queued = queued
        self.waiting = waiting
        self.total = total
        self.paused = paused
        self.held = held
    }
}
