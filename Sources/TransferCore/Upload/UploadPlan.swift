public import Foundation

/// What the engine sends for an upload: the spool copy, how, and what it checks.
public struct UploadPlan: Sendable, Equatable {
    /// The synced copy every attempt reads.
    public var spoolPath: String
    public var method: String
    public var contentType: String?
    public var size: Int64
    /// The copy's SHA-256, sent as `Content-Digest: sha-256=:<base64>:` (RFC 9530).
    public var sha256: Data

    public init(spoolPath: String, method: String, contentType: String?, size: Int64, sha256: Data) {
        self.spoolPath = spoolPath
        self.method = method
        self.contentType = contentType
        self.size = size
        self.sha256 = sha256
    }

    /// The `Content-Digest` field value.
    public var contentDigest: String { "sha-256=:\(sha256.base64EncodedString()):" }
}
