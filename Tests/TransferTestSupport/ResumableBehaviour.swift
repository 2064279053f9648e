/// Which resumable-upload protocol a path of ``TestHTTPServer`` speaks.
public enum ResumableProtocol: Sendable {
    /// tus 1.0.0, core protocol with the creation and termination extensions.
    case tus
    /// "Resumable Uploads for HTTP", draft-ietf-httpbis-resumable-upload-05 (interop version 6).
    case ietf
}

/// How a resumable-upload path of ``TestHTTPServer`` (see
/// ``TestHTTPServer/acceptResumableUploads(_:protocol:behaviour:)``) misbehaves on purpose.
/// Switches combine with ``combined(with:)``.
public struct ResumableBehaviour: Sendable {
    var drop: (bytes: Int64, times: Int)?
    var dropAtOffset: (offset: Int64, times: Int)?
    var stallAtOffset: (offset: Int64, times: Int)?
    var understatement: (bytes: Int64, times: Int)?
    var forcedStatus: (code: Int, times: Int, retryAfter: String?)?
    var interim104 = false
    var locationPrefix: String?
    var withholdsLastByte = false

    /// Follows the protocol.
    public static let normal = ResumableBehaviour()

    /// For each of the first `times` append/creation requests carrying a body: close the connection
    /// once `bytes` body bytes of THAT request arrived; the bytes received before the drop are KEPT
    /// in the upload (as real tus/IETF servers do), so the offset moves on.
    ///
    /// The cut is exact: byte `bytes` and later of that request are neither kept nor counted.
    /// A request counts when it is accepted for appending and announces a body (a `Content-Length`
    /// above 0, or chunked), whether or not the body turns out longer than `bytes`.
    public static func dropAfter(bytes: Int64, times: Int = 1) -> ResumableBehaviour {
        var behaviour = ResumableBehaviour()
        behaviour.drop = (max(0, bytes), times)
        return behaviour
    }

    /// For each of the first `times` appends that would carry the upload past `offset`: keep the
    /// body up to `offset` exactly, then close the connection (a drop "at 40 %" of the whole upload,
    /// whatever the client's request sizes).
    public static func dropAtOffset(_ offset: Int64, times: Int = 1) -> ResumableBehaviour {
        var behaviour = ResumableBehaviour()
        behaviour.dropAtOffset = (max(0, offset), times)
        return behaviour
    }

    /// For each of the first `times` appends that would carry the upload past `offset`: keep the
    /// body up to `offset`, then take in and throw away the rest without counting it, and never
    /// answer (the connection stays open until the client goes). A client killed then finds the
    /// upload at exactly `offset`.
    public static func stallAtOffset(_ offset: Int64, times: Int = 1) -> ResumableBehaviour {
        var behaviour = ResumableBehaviour()
        behaviour.stallAtOffset = (max(0, offset), times)
        return behaviour
    }

    /// The first `times` offset retrievals (HEAD) report `bytes` less than received, and the server
    /// really discards those last bytes (truncates its copy), so the client must send them again.
    ///
    /// Only a HEAD to an incomplete upload that no request is appending to counts.
    public static func understateOffset(by bytes: Int64, times: Int = 1) -> ResumableBehaviour {
        var behaviour = ResumableBehaviour()
        behaviour.understatement = (max(0, bytes), times)
        return behaviour
    }

    /// The first `times` requests of any kind to the path or its resources are answered `code` with
    /// `Retry-After` (when given) before anything else. OPTIONS is not counted and never forced, so that
    /// protocol discovery still works. A body sent with a forced request is read and thrown away.
    public static func status(code: Int, times: Int = 1, retryAfter: String? = nil) -> ResumableBehaviour {
        var behaviour = ResumableBehaviour()
        behaviour.forcedStatus = (code, times, retryAfter)
        return behaviour
    }

    /// IETF only: an upload creation request carrying `Upload-Complete` first gets an interim
    /// `104 Upload Resumption Supported` response with `Location` (off by default, as clients may not
    /// handle it).
    public static let sendInterim104: ResumableBehaviour = {
        var behaviour = ResumableBehaviour()
        behaviour.interim104 = true
        return behaviour
    }()

    /// A creation is answered with `Location: <prefix><resource path>` instead of the origin the
    /// client used: e.g. `http://127.0.0.1:9999` (another host) or `//127.0.0.1:9999` (scheme-relative).
    public static func location(prefix: String) -> ResumableBehaviour {
        var behaviour = ResumableBehaviour()
        behaviour.locationPrefix = prefix
        return behaviour
    }

    /// tus only: every append that brings bytes keeps all of them but its last, and answers `204`
    /// with the `Upload-Offset` it kept, one less than the client sent up to: an upload never
    /// finishes, and once one byte is left, no append moves it.
    public static let withholdLastByte: ResumableBehaviour = {
        var behaviour = ResumableBehaviour()
        behaviour.withholdsLastByte = true
        return behaviour
    }()

    /// This behaviour with `other`'s switches added (`other`'s win where both set one).
    public func combined(with other: ResumableBehaviour) -> ResumableBehaviour {
        var behaviour = self
        behaviour.drop = other.drop ?? drop
        behaviour.dropAtOffset = other.dropAtOffset ?? dropAtOffset
        behaviour.stallAtOffset = other.stallAtOffset ?? stallAtOffset
        behaviour.understatement = other.understatement ?? understatement
        behaviour.forcedStatus = other.forcedStatus ?? forcedStatus
        behaviour.interim104 = interim104 || other.interim104
        behaviour.locationPrefix = other.locationPrefix ?? locationPrefix
        behaviour.withholdsLastByte = withholdsLastByte || other.withholdsLastByte
        return behaviour
    }
}

/// What the server holds for one upload resource.
public struct ResumableUploadRecord: Sendable, CustomStringConvertible {
    /// The protocol the upload was created with.
    public let protocolUsed: ResumableProtocol
    /// The resource's path, e.g. `/files/3`.
    public let resourcePath: String
    /// `Upload-Length` when given (for an IETF upload completed without it, the bytes held).
    public var declaredLength: Int64?
    /// Bytes held now.
    public var offset: Int64
    /// Whether the upload is complete.
    public var complete: Bool
    /// The SHA-256 (lowercase hex) of the held bytes, once complete.
    public var sha256: String?
    /// Every body byte that arrived over the wire for this resource, drops and resends included
    /// (a dropped request's bytes up to the cut only).
    public var bodyBytesReceived: Int64
    /// The requests in order, for diagnostics: e.g. `POST`, `HEAD 0`, `PATCH 0-8388607`,
    /// `PATCH 0-409599 dropped`, `PATCH 409`, `DELETE terminated`.
    public var requests: [String]

    public var description: String {
        "\(resourcePath): \(offset)/\(declaredLength.map(String.init) ?? "?") bytes, "
            + (complete ? "complete, sha256 \(sha256 ?? "none")" : "incomplete")
            + ", \(bodyBytesReceived) body bytes received; " + requests.joined(separator: ", ")
    }
}
