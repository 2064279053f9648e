/// `status`: one job by id, or the caller's jobs, optionally filtered by state.
public enum Status: RPCMethod {
    public static let name = "status"

    public struct Params: Codable, Hashable, Sendable {
        /// One job's id; when absent, a list is returned.
        public var id: String?
        /// Only jobs in these states (list form only).
        public var states: [JobState]?
        /// Every user's jobs, not only the caller's (list form; root only).
        public var all: Bool?

        public init(id: String? = nil, states: [JobState]? = nil, all: Bool? = nil) {
            self.id = id
            self.states = states
            self.all = all
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// The jobs, oldest first; exactly one when an id was given.
        public var jobs: [Job]
        public init(jobs: [Job]) { self.jobs = jobs }
    }
}
