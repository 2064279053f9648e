/// What a job does: fetch a URL into a file, or send a file to a URL.
public enum JobKind: String, Codable, Sendable, CaseIterable {
    case download
    case upload
}

/// The HTTP methods an upload may use.
public enum UploadMethod: String, Codable, Sendable, CaseIterable {
    case put = "PUT"
    case post = "POST"
    case patch = "PATCH"
}

/// How an upload continues after an interruption (`resumable` in `submit`).
public enum ResumableMode: String, Codable, Sendable, CaseIterable {
    /// Ask the server (OPTIONS) and use what it announces: tus, the IETF protocol, else plain.
    case auto
    /// The IETF "Resumable Uploads for HTTP" protocol (draft-ietf-httpbis-resumable-upload).
    case ietf
    /// tus 1.0 (creation, then PATCH from the server's offset).
    case tus
    /// A plain request: an interrupted upload is sent again from byte 0.
    case off
}

/// The protocol an upload is being sent with, once the daemon knows it.
public enum UploadProtocol: String, Codable, Sendable, CaseIterable {
    case plain
    case ietf
    case tus
}

/// The server's answer to a completed upload: what a user needs to find what was created.
public struct UploadResponse: Codable, Hashable, Sendable {
    /// The final HTTP status (2xx).
    public var status: Int
    public var location: String?
    public var etag: String?
    public var contentType: String?
    /// The response body up to `upload_response_body_bytes`: text when it is UTF-8, else base64.
    public var body: String?
    /// `utf8` or `base64`, when there is a body.
    public var bodyEncoding: String?
    /// Whether the body was longer than what is kept.
    public var bodyTruncated: Bool?

    public init(
        status: Int, location: String? = nil, etag: String? = nil, contentType: String? = nil,
        body: String? = nil, bodyEncoding: String? = nil, bodyTruncated: Bool? = nil
    ) {
        self.status = status
        self.location = location
        self.etag = etag
        self.contentType = contentType
        self.body = body
        self.bodyEncoding = bodyEncoding
        self.bodyTruncated = bodyTruncated
    }
}

/// Handing an open file to the daemon: `transferctl` connects to the upload socket beside the
/// control socket, sends one byte with the descriptor attached (`SCM_RIGHTS`), and reads one JSON
/// line back: the spool name to submit with, or why the file was refused.
public enum UploadHandoff {
    /// The upload socket of the daemon whose control socket is `controlSocket`.
    public static func socketPath(forControlSocket controlSocket: String) -> String {
        controlSocket + ".upload"
    }

    /// The daemon's answer to a handed-off descriptor.
    public struct Reply: Codable, Hashable, Sendable {
        /// The spool name to give as `spool` in `submit`, once the copy is synced.
        public var spool: String?
        public var size: Int64?
        /// The SHA-256 of the copy, lowercase hex.
        public var sha256: String?
        public var error: RPCError?

        public init(spool: String? = nil, size: Int64? = nil, sha256: String? = nil, error: RPCError? = nil) {
            self.spool = spool
            self.size = size
            self.sha256 = sha256
            self.error = error
        }
    }
}
