public import Foundation
public import TransferProtocol

/// What the engine sends for an upload: the spool copy, how, and what it checks.
public struct UploadPlan: Sendable, Equatable {
    /// The synced copy every attempt reads.
    public var spoolPath: String
    public var method: String
    public var contentType: String?
    public var size: Int64
    /// The copy's SHA-256, sent as `Content-Digest: sha-256=:<base64>:` (RFC 9530).
    public var sha256: Data
    /// How the upload resumes, the protocol found by an earlier attempt, and the upload resource
    /// it created (a resumable upload continues it, from the offset the server reports).
    public var resumable: ResumableMode = .off
    public var protocolUsed: UploadProtocol?
    public var resource: URL?
    /// The file's name as the submitter gave it (tus sends it as `filename` metadata).
    public var fileName: String?

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
