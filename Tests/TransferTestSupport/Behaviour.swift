/// How a path served by ``TestHTTPServer`` behaves, normal or misbehaving on purpose.
///
/// Each static member turns on one switch; switches combine with ``combined(with:)`` or
/// ``all(_:)`` (e.g. `.all(.trickle(bytesPerSecond: 10_000), .dropAfter(bytes: 5_000))`).
/// "Request number n" below counts every request to the path (GET, HEAD or other) since it was
/// registered with ``TestHTTPServer/serve(_:content:behaviour:)``, starting at 1.
public struct Behaviour: Sendable, CustomStringConvertible {
    /// Where a redirect points.
    enum RedirectTarget: Sendable {
        /// The given `Location`, sent verbatim.
        case location(String)
        /// The request's own path: a redirect loop.
        case itself
    }

    var drop: (bytes: Int64, times: Int)?
    var ignoresRange = false
    var rangeShift: Int64?
    var changeETagAfterRequests: Int?
    var weakETag = false
    var forcedStatus: (code: Int, times: Int, retryAfter: String?)?
    var gzip = false
    var trickleRate: Int?
    var redirect: (target: RedirectTarget, status: Int)?
    var extraContentLength: Int64?
    var announcedDigest: (header: String, algorithm: String, correct: Bool)?
    var hold: (point: HoldPoint, gate: ServerGate)?

    /// Well-behaved: GET and HEAD, strong ETag, Last-Modified, byte ranges, If-Range.
    public static let normal = Behaviour()

    /// For each of the first `times` GET responses whose body is longer than `bytes`, send exactly
    /// `bytes` body bytes and then close the connection (no error status; the headers promised more).
    /// Responses whose body is not longer than `bytes` are sent whole and do not count.
    public static func dropAfter(bytes: Int64, times: Int = 1) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.drop = (max(0, bytes), times)
        return behaviour
    }

    /// Ignore `Range`: always 200 with the full body, and no `Accept-Ranges` header.
    public static let ignoreRange: Behaviour = {
        var behaviour = Behaviour()
        behaviour.ignoresRange = true
        return behaviour
    }()

    /// Answer a satisfiable range request `bytes=N-M` with 206 starting at `N + by` instead (clamped to the
    /// content), the same length where the content allows; `Content-Range` tells the offset really sent.
    public static func wrongRangeOffset(by shift: Int64) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.rangeShift = shift
        return behaviour
    }

    /// From request number `requests + 1` on, serve ``TestContent/replacement`` (another seed, same size)
    /// with its own ETag and a later Last-Modified.
    public static func changeETagAfter(requests: Int) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.changeETagAfterRequests = max(0, requests)
        return behaviour
    }

    /// Send a weak `ETag: W/"..."` and no `Last-Modified`. Since `If-Range` needs a strong validator,
    /// a range request carrying `If-Range` then always gets the full 200.
    public static let weakETagOnly: Behaviour = {
        var behaviour = Behaviour()
        behaviour.weakETag = true
        return behaviour
    }()

    /// Answer requests number 1...`times` with status `code` (an empty body, and `Retry-After` when
    /// given), then behave normally.
    public static func status(code: Int, times: Int = 1, retryAfter: String? = nil) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.forcedStatus = (code, times, retryAfter)
        return behaviour
    }

    /// Add `Content-Encoding: gzip` to 200 and 206 responses; the body stays the raw content.
    public static let gzipContentEncoding: Behaviour = {
        var behaviour = Behaviour()
        behaviour.gzip = true
        return behaviour
    }()

    /// Send the body at about `bytesPerSecond`, in small writes ten times a second (at least one byte each).
    public static func trickle(bytesPerSecond: Int) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.trickleRate = max(1, bytesPerSecond)
        return behaviour
    }

    /// For every GET response, send the first `bytes` body bytes, then wait until `gate` is open
    /// before sending the rest.
    public static func holdAfter(bytes: Int64, until gate: ServerGate) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.hold = (.afterBytes(max(0, bytes)), gate)
        return behaviour
    }

    /// For every GET response whose body holds byte `offset` of the content, send the bytes
    /// before it, then wait until `gate` is open before sending the rest; responses that begin
    /// after `offset` are sent as usual. However the client splits the file into ranges, it cannot
    /// have the whole file while the gate is shut.
    public static func holdAt(offset: Int64, until gate: ServerGate) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.hold = (.atOffset(max(0, offset)), gate)
        return behaviour
    }

    /// Answer every request with `status` and `Location: <to>` (sent verbatim; use
    /// ``TestHTTPServer/url(_:)`` for an absolute one) and an empty body. Redirecting a path to itself loops.
    public static func redirect(to location: String, status: Int = 302) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.redirect = (.location(location), status)
        return behaviour
    }

    /// Redirect every request to its own path (absolute URL on this server): a redirect loop.
    public static func redirectLoop(status: Int = 302) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.redirect = (.itself, status)
        return behaviour
    }

    /// Declare a `Content-Length` `extra` bytes larger than the body really sent; after the real body
    /// (GET) close the connection. The response also says `Connection: close`.
    public static func lyingContentLength(extra: Int64) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.extraContentLength = extra
        return behaviour
    }

    /// Announce the content's digest (RFC 9530) in `header` (`Repr-Digest`, on every 200 and 206, or
    /// `Content-Digest`, on 200 only) with `algorithm` (`sha-256` or `sha-512`); when not `correct`,
    /// the digest announced is that of ``TestContent/replacement``.
    public static func digest(header: String = "Repr-Digest", algorithm: String = "sha-256", correct: Bool = true) -> Behaviour {
        var behaviour = Behaviour()
        behaviour.announcedDigest = (header, algorithm, correct)
        return behaviour
    }

    /// These switches plus those of `other` (where both set the same switch, `other` wins).
    public func combined(with other: Behaviour) -> Behaviour {
        var merged = self
        if let drop = other.drop { merged.drop = drop }
        merged.ignoresRange = ignoresRange || other.ignoresRange
        if let shift = other.rangeShift { merged.rangeShift = shift }
        if let after = other.changeETagAfterRequests { merged.changeETagAfterRequests = after }
        merged.weakETag = weakETag || other.weakETag
        if let status = other.forcedStatus { merged.forcedStatus = status }
        merged.gzip = gzip || other.gzip
        if let rate = other.trickleRate { merged.trickleRate = rate }
        if let redirect = other.redirect { merged.redirect = redirect }
        if let extra = other.extraContentLength { merged.extraContentLength = extra }
        if let digest = other.announcedDigest { merged.announcedDigest = digest }
        if let hold = other.hold { merged.hold = hold }
        return merged
    }

    /// All the given switches together.
    public static func all(_ behaviours: Behaviour...) -> Behaviour {
        behaviours.reduce(.normal) { $0.combined(with: $1) }
    }

    public var description: String {
        var parts: [String] = []
        if let drop { parts.append("dropAfter(bytes: \(drop.bytes), times: \(drop.times))") }
        if ignoresRange { parts.append("ignoreRange") }
        if let rangeShift { parts.append("wrongRangeOffset(by: \(rangeShift))") }
        if let changeETagAfterRequests { parts.append("changeETagAfter(requests: \(changeETagAfterRequests))") }
        if weakETag { parts.append("weakETagOnly") }
        if let forcedStatus {
            parts.append(
                "status(code: \(forcedStatus.code), times: \(forcedStatus.times), "
                    + "retryAfter: \(forcedStatus.retryAfter ?? "nil"))"
            )
        }
        if gzip { parts.append("gzipContentEncoding") }
        if let trickleRate { parts.append("trickle(bytesPerSecond: \(trickleRate))") }
        if let redirect {
            switch redirect.target {
            case .location(let location): parts.append("redirect(to: \(location), status: \(redirect.status))")
            case .itself: parts.append("redirectLoop(status: \(redirect.status))")
            }
        }
        if let extraContentLength { parts.append("lyingContentLength(extra: \(extraContentLength))") }
        switch hold?.point {
        case .afterBytes(let bytes): parts.append("holdAfter(bytes: \(bytes))")
        case .atOffset(let offset): parts.append("holdAt(offset: \(offset))")
        case nil: break
        }
        if let announcedDigest {
            parts.append("digest(header: \(announcedDigest.header), algorithm: \(announcedDigest.algorithm), correct: \(announcedDigest.correct))")
        }
        return parts.isEmpty ? "normal" : parts.joined(separator: ", ")
    }
}

/// Where a held response stops (``Behaviour/holdAfter(bytes:until:)``, ``Behaviour/holdAt(offset:until:)``).
enum HoldPoint: Sendable {
    /// After this many bytes of each response's body.
    case afterBytes(Int64)
    /// At this offset of the content, in the response whose body holds it.
    case atOffset(Int64)
}
