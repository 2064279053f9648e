/// `subscribe`: stream job events on this connection as notifications.
///
/// With `session`, the session's unacknowledged terminal events are replayed first, in sequence
/// order; with `ids`, the latest event of each of those jobs. Then one `caughtUp` notification,
/// then live events. Without filters: live events of the caller's jobs (root with `all`: everyone's).
///
/// With `after` (the last sequence number a client saw, before its connection broke or the daemon
/// restarted), the replay is instead the latest event of each job in the subscription's scope that
/// changed after it: a reconnecting client continues where it stopped, missing nothing and seeing
/// nothing twice. Sequence numbers only grow, across restarts too.
public enum Subscribe: RPCMethod {
    public static let name = "subscribe"

    public struct Params: Codable, Hashable, Sendable {
        /// Only jobs submitted under this session (by the caller).
        public var session: String?
        /// Only these jobs.
        public var ids: [String]?
        /// Every user's jobs, not only the caller's (root only; not with `session`).
        public var all: Bool?
        /// Replay the latest event of each job in scope that changed after this sequence number.
        public var after: UInt64?

        public init(session: String? = nil, ids: [String]? = nil, all: Bool? = nil, after: UInt64? = nil) {
            self.session = session
            self.ids = ids
            self.all = all
            self.after = after
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// Names this subscription in its notifications and in `unsubscribe`.
        public var subscription: Int
        /// How many events the replay holds.
        public var replay: Int
        /// The last sequence number the daemon had assigned when the subscription began.
        public var seq: UInt64

        public init(subscription: Int, replay: Int, seq: UInt64) {
            self.subscription = subscription
            self.replay = replay
            self.seq = seq
        }
    }
}

/// `unsubscribe`: stop one subscription of this connection.
public enum Unsubscribe: RPCMethod {
    public static let name = "unsubscribe"

    public struct Params: Codable, Hashable, Sendable {
        public var subscription: Int
        public init(subscription: Int) { self.subscription = subscription }
    }

    public struct Result: Codable, Hashable, Sendable {
        public init() {}
    }
}
