/// `move`: changes a job's position within its priority class, which is the order queued jobs of
/// the class start in: `first: true` puts it ahead of the others (a user's own jobs; root's: all
/// jobs), `before: ID2` just ahead of job ID2, which must be of the same class.
public enum Move: RPCMethod {
    public static let name = "move"

    public struct Params: Codable, Hashable, Sendable {
        public var id: String
        /// Ahead of every other job of its class.
        public var first: Bool?
        /// Just ahead of this job.
        public var before: String?

        public init(id: String, first: Bool? = nil, before: String? = nil) {
            self.id = id
            self.first = first
            self.before = before
        }

        /// What is wrong with the params (no place or two places given), with the fix; nil when
        /// they are usable.
        public var problem: String? {
            if id.isEmpty { return "id is empty: give the id of the job to move" }
            if first == true, before != nil { return "give only one of first and before: they are different places" }
            if let before {
                if before.isEmpty { return "before is empty: give the id of the job to move this one ahead of" }
                if before == id { return "a job cannot be moved before itself: give another job's id as before" }
                return nil
            }
            if first == true { return nil }
            return "say where to move the job: give first: true, or before: the id of another job of its class"
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }
}
