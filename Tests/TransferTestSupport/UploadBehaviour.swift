/// How an upload path of ``TestHTTPServer`` (see ``TestHTTPServer/acceptUploads(_:behaviour:)``)
/// treats the bodies sent to it with PUT, POST or PATCH. Switches combine with ``combined(with:)``.
public struct UploadBehaviour: Sendable {
    var drop: (bytes: Int64, times: Int)?
    var forcedStatus: (code: Int, times: Int, retryAfter: String?)?
    var requiresContentLength = false
    var maxBodyBytes: Int64?
    var silentTimes = 0

    /// Takes every body and answers 201 with `Location`, `ETag` and a JSON body naming its SHA-256.
    public static let normal = UploadBehaviour()

    /// For each of the first `times` uploads, close the connection once `bytes` body bytes arrived.
    public static func dropAfter(bytes: Int64, times: Int = 1) -> UploadBehaviour {
        var behaviour = UploadBehaviour()
        behaviour.drop = (bytes, times)
        return behaviour
    }

    /// Answer the first `times` uploads with `code` (after reading the body), with `Retry-After` when
    /// given; a 401 comes with a Basic login challenge (`WWW-Authenticate`).
    public static func status(code: Int, times: Int = 1, retryAfter: String? = nil) -> UploadBehaviour {
        var behaviour = UploadBehaviour()
        behaviour.forcedStatus = (code, times, retryAfter)
        return behaviour
    }

    /// Take the whole body of the first `times` uploads but never answer (the connection stays open).
    public static func neverAnswer(times: Int = 1) -> UploadBehaviour {
        var behaviour = UploadBehaviour()
        behaviour.silentTimes = times
        return behaviour
    }

    /// Answer 411 (Length Required) to a body sent without `Content-Length`.
    public static let requireContentLength: UploadBehaviour = {
        var behaviour = UploadBehaviour()
        behaviour.requiresContentLength = true
        return behaviour
    }()

    /// Answer 413 (Content Too Large) to a body longer than `bytes`.
    public static func refuseLargerThan(_ bytes: Int64) -> UploadBehaviour {
        var behaviour = UploadBehaviour()
        behaviour.maxBodyBytes = bytes
        return behaviour
    }

    /// This behaviour with `other`'s switches added.
    public func combined(with other: UploadBehaviour) -> UploadBehaviour {
        var behaviour = self
        behaviour.drop = other.drop ?? drop
        behaviour.forcedStatus = other.forcedStatus ?? forcedStatus
        behaviour.requiresContentLength = requiresContentLength || other.requiresContentLength
        behaviour.maxBodyBytes = other.maxBodyBytes ?? maxBodyBytes
        return behaviour
    }
}

/// One upload request as the server received it.
public struct ReceivedUpload: Sendable, CustomStringConvertible {
    public let method: String
    public let path: String
    public let headers: [(String, String)]
    /// Body bytes received.
    public var bytes: Int64 = 0
    /// The SHA-256 (lowercase hex) of the body, once it ended.
    public var sha256: String?
    /// The status answered; nil when the connection was dropped or broke first.
    public var status: Int?

    /// The first value of the header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    public var description: String {
        "\(method) \(path): \(bytes) bytes, status \(status.map(String.init) ?? "none"), sha256 \(sha256 ?? "none")"
    }
}
