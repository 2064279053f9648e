/// Which jobs `pause` and `resume` act on: exactly one of `ids`, `session` or `all`.
public struct JobSelection: Codable, Hashable, Sendable {
    /// These jobs, by id (each must be the caller's; root may name anyone's).
    public var ids: [String]?
    /// The caller's jobs of this session (root: every user's jobs of it).
    public var session: String?
    /// Every job of the caller's; for root, every job and the daemon-wide hold.
    public var all: Bool?

    public init(ids: [String]? = nil, session: String? = nil, all: Bool? = nil) {
        self.ids = ids
        self.session = session
        self.all = all
    }

    /// What is wrong with the selection (none or more than one way to choose jobs, an empty list
    /// of ids), with the fix; nil when it is usable.
    public var problem: String? {
        let given = [ids != nil, session != nil, all == true].filter { $0 }.count
        if all == false, ids == nil, session == nil {
            return "all is false and nothing else is given: give ids, session, or all: true"
        }
        if given == 0 { return "say which jobs: give ids (a list of job ids), session (a session name) or all: true" }
        if given > 1 { return "give only one of ids, session and all: they are different ways to choose jobs" }
        if let ids {
            if ids.isEmpty { return "ids is empty: give the id of at least one job" }
            if ids.contains(where: \.isEmpty) { return "ids holds an empty string: every id must be a job's id" }
            if ids.count > Limits.maxJobsPerSelection {
                return "ids holds \(ids.count) ids, more than \(Limits.maxJobsPerSelection): send them in several requests, or use session or all"
            }
        }
        return nil
    }
}

/// What `pause` and `resume` did: the jobs they apply to, as they are now, and the ids that name
/// no job the caller may see.
public struct JobSelectionResult: Codable, Hashable, Sendable {
    /// The jobs selected, as they are after the request (a job that was paused already, or not
    /// paused, is listed as it is).
    public var jobs: [Job]
    /// Ids of `ids` that name no job the caller may see.
    public var notFound: [String]
    /// Whether the daemon-wide hold is on after the request: true while it is on, false when
    /// root's `all` lifted it (or found it off), absent otherwise.
    public var hold: Bool?

    public init(jobs: [Job], notFound: [String] = [], hold: Bool? = nil) {
        self.jobs = jobs
        self.notFound = notFound
        self.hold = hold
    }
}

/// `pause`: holds jobs where they are. A running transfer checkpoints its partial file and stops;
/// a queued or waiting job stays out of the queue. Paused jobs keep their place in submission
/// order and survive restarts. Root's `all` also holds the daemon: no transfer starts until
/// `resume` with `all`.
public enum Pause: RPCMethod {
    public static let name = "pause"
    public typealias Params = JobSelection
    public typealias Result = JobSelectionResult
}
