/// `remove`: forgets a finished job: its record, its partial file, and its terminal event if its
/// session has not acknowledged it yet (the answer says so).
public enum Remove: RPCMethod {
    public static let name = "remove"

    public struct Params: Codable, Hashable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// The job as it was when it was forgotten.
        public var job: Job
        /// Whether its session had not yet acknowledged its end (that event is gone now).
        public var droppedEvent: Bool
        public init(job: Job, droppedEvent: Bool) {
            self.job = job
            self.droppedEvent = droppedEvent
        }
    }
}

/// `clean`: forgets the caller's finished jobs (root: with `all`, everyone's), optionally only
/// those in some states and ended some time ago.
public enum Clean: RPCMethod {
    public static let name = "clean"

    public struct Params: Codable, Hashable, Sendable {
        /// Only jobs that ended in these states (`completed`, `failed`, `cancelled`); all three when absent.
        public var states: [JobState]?
        /// Only jobs that ended at least this many seconds ago.
        public var olderThanSeconds: Double?
        /// Every user's finished jobs (root only).
        public var all: Bool?

        public init(states: [JobState]? = nil, olderThanSeconds: Double? = nil, all: Bool? = nil) {
            self.states = states
            self.olderThanSeconds = olderThanSeconds
            self.all = all
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// How many jobs were forgotten.
        public var removed: Int
        /// How many of them had an end their session had not acknowledged.
        public var droppedEvents: Int
        public init(removed: Int, droppedEvents: Int) {
            self.removed = removed
            self.droppedEvents = droppedEvents
        }
    }
}

/// `retry`: queues a failed or cancelled job again under its id. A failed download continues from
/// its partial file when the server's validator still matches.
public enum Retry: RPCMethod {
    public static let name = "retry"

    public struct Params: Codable, Hashable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }
}
