/// `status`: one job by id, or the caller's jobs, optionally filtered by state.
public enum Status: RPCMethod {
    public static let name = "status"

    public struct Params: Codable, Hashable, Sendable {
        /// One job's id; when absent, a list is returned.
        public var id: String?
        /// Only jobs in these states (list form only).
        public var states: [JobState]?

        public init(id: String? = nil, states: [JobState]? = nil) {
            self.id = id
            self.states = states
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// The jobs, oldest first; exactly one when an id was given.
        public var jobs: [Job]
        public init(jobs: [Job]) { self.jobs = jobs }
    }
}
