/// `cancel`: stop a queued or running job and remove its partial file.
public enum Cancel: RPCMethod {
    public static let name = "cancel"

    public struct Params: Codable, Hashable, Sendable {
        public var id: String
        public init(id: String) { self.id = id }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }
}
