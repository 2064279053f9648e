public import Foundation

/// What happened to a job: one of its state changes, or news of its progress.
public enum JobEventType: String, Codable, Sendable, CaseIterable {
    /// Accepted, or due again after waiting.
    case queued
    /// A transfer attempt began.
    case started
    /// More bytes arrived (at most about once a second per job, and only when something moved).
    case progress
    /// An attempt failed in a way worth retrying; the job tries again at `next_attempt_at`.
    case waiting
    /// The job was paused (`pause`): a running transfer has checkpointed and stopped; the job
    /// (`queued`, `paused: true`) does not start until resumed.
    case paused
    /// A paused job was resumed: it is queued again in its submission order.
    case resumed
    /// The job's priority class or its place in its class changed (`priority`, `move`); the job
    /// carries the new `priority`.
    case prioritized
    case completed
    case failed
    case cancelled

    /// Whether the event ends its job: these are kept for a session until it acknowledges them.
    public var isTerminal: Bool {
        switch self {
        case .completed, .failed, .cancelled: return true
        case .queued, .started, .progress, .waiting, .paused, .resumed, .prioritized: return false
        }
    }

    /// The event that a job in `state` last had (progress aside).
    public init(latestFor state: JobState) {
        switch state {
        case .queued: self = .queued
        case .running: self = .started
        case .waiting: self = .waiting
        case .completed: self = .completed
        case .failed: self = .failed
        case .cancelled: self = .cancelled
        }
    }
}

/// One event: a daemon-wide sequence number, its type, when it happened, and the job as it was then.
/// Sent as the params of an `event` notification.
public struct JobEvent: Codable, Hashable, Sendable {
    /// The subscription the event is delivered on (set per delivery).
    public var subscription: Int?
    /// Increases with every event the daemon emits, across restarts.
    public var seq: UInt64
    public var type: JobEventType
    public var time: Date
    public var job: Job

    public init(subscription: Int? = nil, seq: UInt64, type: JobEventType, time: Date, job: Job) {
        self.subscription = subscription
        self.seq = seq
        self.type = type
        self.time = time
        self.job = job
    }
}

/// The notifications the daemon sends on a connection with subscriptions.
public enum NotificationMethod {
    /// A job event; params are a `JobEvent`.
    public static let event = "event"
    /// The replay of missed events is over; params are `CaughtUp`.
    public static let caughtUp = "caughtUp"
    /// The daemon is about to close the connection; params are `Disconnect`.
    public static let disconnect = "disconnect"
}

/// Params of `caughtUp`: every missed event of the subscription has been sent; live events follow.
public struct CaughtUp: Codable, Hashable, Sendable {
    public var subscription: Int
    /// How many events were replayed.
    public var replayed: Int
    /// The last sequence number the daemon had assigned when the subscription began.
    public var seq: UInt64

    public init(subscription: Int, replayed: Int, seq: UInt64) {
        self.subscription = subscription
        self.replayed = replayed
        self.seq = seq
    }
}

/// Params of `disconnect`: why the daemon closes the connection, and what to do.
public struct Disconnect: Codable, Hashable, Sendable {
    /// `slow_subscriber` (the client stopped reading and its queue filled) or `shutting_down`.
    public var reason: String
    public var message: String

    public init(reason: String, message: String) {
        self.reason = reason
        self.message = message
    }
}
