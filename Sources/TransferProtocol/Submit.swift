/// `submit`: accept a download. Answered only once the job is durable.
public enum Submit: RPCMethod {
    public static let name = "submit"

    public struct Params: Codable, Hashable, Sendable {
        /// An absolute `http` or `https` URL.
        public var url: String
        /// An absolute path of the file to create.
        public var destination: String
        /// Request headers, by name.
        public var headers: [String: String]?
        /// Replace an existing destination file.
        public var overwrite: Bool?
        /// A client-chosen id: resubmitting the same request with it returns the existing job.
        public var id: String?

        public init(
            url: String, destination: String, headers: [String: String]? = nil,
            overwrite: Bool? = nil, id: String? = nil
        ) {
            self.url = url
            self.destination = destination
            self.headers = headers
            self.overwrite = overwrite
            self.id = id
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }
}
