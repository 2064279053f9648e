public import Foundation
/// `submit`: accept a download or an upload. Answered only once the job is durable.
public enum Submit: RPCMethod {
    public static let name = "submit"

    public struct Params: Codable, Hashable, Sendable {
        /// An absolute `http` or `https` URL.
        public var url: String
        /// An absolute path of the file to create (downloads only).
        public var destination: String?
        /// Request headers, by name.
        public var headers: [String: String]?
        /// Replace an existing destination file.
        public var overwrite: Bool?
        /// A client-chosen id: resubmitting the same request with it returns the existing job.
        public var id: String?
        /// The file's expected SHA-256, 64 hex digits: a different file fails the job.
        public var sha256: String?
        /// The file's expected size in bytes: checked against the server's and the free space.
        public var size: Int64?
        /// Retry limits for this job; each one left out takes the daemon's configured default.
        public var retry: RetryLimits?
        /// A session name (1–128 of `A-Z a-z 0-9 . _ -`): the job's terminal event is kept for the
        /// session until it acknowledges it.
        public var session: String?
        /// Create the destination's missing directories (inside an allowed root, without following
        /// a symbolic link, owned by the submitter), as `mkdir -p` would.
        public var createDirectories: Bool?
        /// When a job with this `id` has ended: start a new job under the id, forgetting the old one
        /// (without it, such a submit is refused with `job_exists`).
        public var replace: Bool?
        /// Not started before this time (like URLSession's earliestBeginDate).
        public var notBefore: Date?
        /// Failed as `time_limit` if not done by this time.
        public var deadline: Date?
        /// `download` (the default) or `upload`.
        public var kind: String?
        /// Uploads: the file to send. With `spool` it only names the file; without, the daemon
        /// opens it itself, which only its own user may ask for.
        public var source: String?
        /// Uploads: the spool name the upload socket answered for a handed-off descriptor.
        public var spool: String?
        /// Uploads: `PUT` (the default), `POST` or `PATCH`.
        public var method: String?
        /// Uploads: the `Content-Type` to send.
        public var contentType: String?
        /// Uploads: `auto` (the default), `ietf`, `tus` or `off` (see ``ResumableMode``).
        public var resumable: String?
        /// `foreground`, `normal` (the default) or `background` (see ``JobPriority``).
        public var priority: String?
        /// The most bytes per second this job may use, as curl's `--limit-rate` spells it: `2M`,
        /// `500K`, `1048576` (K, M, G are powers of 1024; `0`: no limit of its own).
        public var limitRate: String?
        /// Downloads: how many connections may fetch disjoint ranges of the file at once (1–16, as
        /// aria2's `-x`/`-s`); absent: the daemon's configured `segments` (1 unless configured).
        public var segments: Int?
        /// CA certificates (PEM text, not a path) to trust for this job besides the daemon's, as
        /// curl's `--cacert` (transferctl reads the file and sends its content).
        public var cacert: String?
        /// Uploads: send the file as one part of a `multipart/form-data` body with these fields
        /// (see ``FormPart``), as curl's `-F`. The method defaults to `POST`, the upload is not
        /// resumable, and the `Content-Type` (with its boundary) is the daemon's.
        public var form: [FormPart]?
        /// Free text the submitter keeps with the job (at most 1,024 bytes, no control
        /// characters), returned in every `Job` as `label`: URLSession's `taskDescription`.
        public var label: String?
        /// Downloads: ask the server whether the file changed since the destination was last
        /// downloaded (`If-None-Match`, `If-Modified-Since`, as wget `-N` or curl `-z`): a `304`
        /// completes the job as `unchanged` and leaves the file; a new version replaces it.
        public var conditional: Bool?

        public init(
            url: String, destination: String?, headers: [String: String]? = nil,
            overwrite: Bool? = nil, id: String? = nil, sha256: String? = nil, size: Int64? = nil,
            retry: RetryLimits? = nil, session: String? = nil, createDirectories: Bool? = nil,
            kind: String? = nil, source: String? = nil, spool: String? = nil, method: String? = nil, contentType: String? = nil,
            resumable: String? = nil
        ) {
            self.resumable = resumable
            self.kind = kind
            self.source = source
            self.spool = spool
            self.method = method
            self.contentType = contentType
            self.createDirectories = createDirectories
            self.url = url
            self.destination = destination
            self.headers = headers
            self.overwrite = overwrite
            self.id = id
            self.sha256 = sha256
            self.size = size
            self.retry = retry
            self.session = session
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        public var job: Job
        public init(job: Job) { self.job = job }
    }
}
