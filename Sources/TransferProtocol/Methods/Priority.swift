/// A job's priority class (as in Windows BITS). The scheduler starts `foreground` jobs first, then
/// `normal` ones, then `background` ones; within a class, jobs start in their queue order
/// (submission order unless moved, see ``Move``). A `background` job runs only while no
/// `foreground` or `normal` job waits for a slot, and gives its slot up (checkpointed, continued
/// later from the same byte) when one arrives.
public enum JobPriority: String, Codable, Sendable, CaseIterable {
    case foreground
    case normal
    case background

    /// The order classes start in: lower first.
    public var rank: Int {
        switch self {
        case .foreground: return 0
        case .normal: return 1
        case .background: return 2
        }
    }

    /// How messages list the classes.
    public static let choices = "foreground, normal or background"
}

/// `priority`: changes the priority class of a queued, waiting or running job. The job keeps its
/// position key and is ordered by it among the jobs of its new class.
public enum PriorityMethod: RPCMethod {
    public static let name = "priority"

    public struct Params: Codable, Hashable, Sendable {
        public var id: String
        /// `foreground`, `normal` or `background` (checked by the daemon, which names the choices).
        public var priority: String

        public init(id: String, priority: String) {
            self.id = id
            self.priority = priority
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }
}
