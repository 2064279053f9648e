public import Foundation

/// `status`: one job by id, or a page of the caller's jobs, filtered by the daemon.
///
/// Lists come in pages of at most `limit` jobs (default `Status.defaultLimit`, at most
/// `Status.maxLimit`). When more jobs match, the result carries `next_cursor`: pass it back as
/// `cursor` with the same filters for the next page. Pages follow submission order, oldest first,
/// or newest first with `newest_first`; jobs submitted or removed between pages do not shift them.
public enum Status: RPCMethod {
    public static let name = "status"

    /// Jobs in a page when the request gives no `limit`.
    public static let defaultLimit = 1_000
    /// The largest `limit`.
    public static let maxLimit = 10_000

    public struct Params: Codable, Hashable, Sendable {
        /// One job's id; when absent, a list is returned.
        public var id: String?
        /// Only jobs in these states (list form only).
        public var states: [JobState]?
        /// Every user's jobs, not only the caller's (list form; root only).
        public var all: Bool?
        /// Only jobs of this session.
        public var session: String?
        /// Only jobs of this user (root only; implies every user's jobs are searched).
        public var owner: UInt32?
        /// Only jobs created at or after this time.
        public var createdAfter: Date?
        /// Only jobs created before this time.
        public var createdBefore: Date?
        /// At most this many jobs (1 to `maxLimit`).
        public var limit: Int?
        /// Where the previous page ended (its `next_cursor`).
        public var cursor: String?
        /// Newest first instead of oldest first.
        public var newestFirst: Bool?
        /// Also (or, without `states`, only) the paused unfinished jobs, which `transferctl status`
        /// shows as `paused` (list form only).
        public var paused: Bool?

        public init(
            id: String? = nil, states: [JobState]? = nil, all: Bool? = nil, session: String? = nil, owner: UInt32? = nil,
            createdAfter: Date? = nil, createdBefore: Date? = nil, limit: Int? = nil, cursor: String? = nil,
            newestFirst: Bool? = nil, paused: Bool? = nil
        ) {
            self.id = id
            self.states = states
            self.all = all
            self.session = session
            self.owner = owner
            self.createdAfter = createdAfter
            self.createdBefore = createdBefore
            self.limit = limit
            self.cursor = cursor
            self.newestFirst = newestFirst
            self.paused = paused
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// The jobs of this page, in the order asked for; exactly one when an id was given.
        public var jobs: [Job]
        /// How many jobs match the filters, on every page (list form only).
        public var total: Int?
        /// How many jobs match the filters other than `states`, by state (list form only).
        public var counts: [String: Int]?
        /// Present when more jobs match: the `cursor` of the next page.
        public var nextCursor: String?
        /// True while the daemon-wide hold (root's `pause --all`) keeps transfers from starting;
        /// absent otherwise.
        public var hold: Bool?

        public init(jobs: [Job], total: Int? = nil, counts: [String: Int]? = nil, nextCursor: String? = nil, hold: Bool? = nil) {
            self.jobs = jobs
            self.total = total
            self.counts = counts
            self.nextCursor = nextCursor
            self.hold = hold
        }
    }
}
