import Foundation
import TransferProtocol

/// The resumable part of an upload's decisions.
///
/// | step | request | answer | next |
/// |---|---|---|---|
/// | probe (`auto`) | `OPTIONS url` | `Tus-Resumable` | tus |
/// | | | `Upload-Draft-Interop-Version` or `Upload-Limit` | IETF |
/// | | | anything else that is not a 5xx | plain |
/// | create, tus | `POST url`, `Upload-Length`, empty body | 2xx with `Location` | append from `Upload-Offset` (0) |
/// | create, IETF | the job's method to `url`, `Upload-Complete: ?0`, `Upload-Length`, empty body | 2xx with `Location` | append from `Upload-Offset` (0) |
/// | offset | `HEAD resource` | 2xx with `Upload-Offset` | append from there (IETF: `Upload-Complete: ?1` at the full size completes) |
/// | | | 4xx but 408 and 429 | create again, from 0 |
/// | append | `PATCH resource`, `Upload-Offset`, a segment | 2xx | the next segment, or complete after the last |
/// | | | 409 (offset mismatch) | offset (at most 3 in a row) |
///
/// Any other answer is a refusal like a plain upload's (5xx and 429 retried); a request that
/// breaks off is retried, and the next attempt asks for the offset first, so it sends again only
/// what the server does not hold.
extension UploadAttempt {
    /// The tus version sent and expected.
    static let tusVersion = "1.0.0"
    /// The IETF draft's interop version (draft-ietf-httpbis-resumable-upload-05).
    static let ietfInteropVersion = "6"
    /// 409 answers in a row after which the attempt ends.
    static let maxConflicts = 3

    /// The next request of the upload, from what it knows.
    mutating func next() -> [Action] {
        guard let protocolUsed else {
            return send(.probe, Request(method: "OPTIONS", url: settings.url, headers: protocolHeaders(.tus), body: .none))
        }
        switch protocolUsed {
        case .plain:
            var headers = ["Content-Digest": settings.contentDigest]
            headers["Content-Type"] = settings.contentType
            return send(.plain, Request(method: settings.method, url: settings.url, headers: headers, body: .wholeFile))
        case .tus, .ietf:
            guard let resource else { return create(protocolUsed) }
            guard offsetKnown else {
                return send(.offset, Request(method: "HEAD", url: resource, headers: protocolHeaders(protocolUsed), body: .none))
            }
            if protocolUsed == .tus, offset == settings.size {
                return [.complete(UploadResponse(status: 204, location: resource.absoluteString))]
            }
            let end = min(settings.size, offset + max(settings.segmentBytes, 1))
            var headers = protocolHeaders(protocolUsed)
            headers["Upload-Offset"] = String(offset)
            if protocolUsed == .tus {
                headers["Content-Type"] = "application/offset+octet-stream"
            } else {
                headers["Content-Type"] = "application/partial-upload"
                headers["Upload-Complete"] = end == settings.size ? "?1" : "?0"
            }
            return send(.append(offset..<end), Request(method: "PATCH", url: resource, headers: headers, body: .range(offset..<end)))
        }
    }

    private mutating func create(_ protocolUsed: UploadProtocol) -> [Action] {
        var headers = protocolHeaders(protocolUsed)
        headers["Upload-Length"] = String(settings.size)
        if protocolUsed == .tus {
            var metadata: [String] = []
            if let name = settings.fileName, !name.isEmpty { metadata.append("filename " + Data(name.utf8).base64EncodedString()) }
            // As the common tus clients send them: some servers refuse to resume an upload without both.
            let type = settings.contentType ?? "application/octet-stream"
            metadata.append("filetype " + Data(type.utf8).base64EncodedString())
            if !metadata.isEmpty { headers["Upload-Metadata"] = metadata.joined(separator: ",") }
            return send(.create, Request(method: "POST", url: settings.url, headers: headers, body: .none))
        }
        headers["Upload-Complete"] = "?0"
        headers["Content-Type"] = settings.contentType
        // The digest of the whole representation, which this request only begins.
        headers["Repr-Digest"] = settings.contentDigest.isEmpty ? nil : settings.contentDigest
        return send(.create, Request(method: settings.method, url: settings.url, headers: headers, body: .none))
    }

    private func protocolHeaders(_ protocolUsed: UploadProtocol) -> [String: String] {
        Self.headers(of: protocolUsed)
    }

    /// The fields every request of a resumable protocol carries.
    static func headers(of protocolUsed: UploadProtocol) -> [String: String] {
        switch protocolUsed {
        case .tus: return ["Tus-Resumable": Self.tusVersion]
        case .ietf: return ["Upload-Draft-Interop-Version": Self.ietfInteropVersion]
        case .plain: return [:]
        }
    }

    /// The request that asks the server to drop an upload resource nobody will complete (tus's
    /// termination extension; the IETF draft's upload cancellation): a DELETE of the resource.
    static func termination(of resource: URL, _ protocolUsed: UploadProtocol) -> Request {
        Request(method: "DELETE", url: resource, headers: headers(of: protocolUsed), body: .none)
    }

    /// The answer to a probe, a creation, an offset retrieval or an append.
    mutating func resumableAnswer(_ response: Response) -> [Action] {
        let success = (200...299).contains(response.status)
        switch step {
        case .plain:
            return []
        case .probe:
            if HTTPStatusClass.isTransient(response.status) { return [refusal(response)] }
            let found: UploadProtocol = response.announcesTus ? .tus : response.announcesIETF ? .ietf : .plain
            learn(protocol: found)
            return [.record(found, resource: nil, offset: 0)] + next()
        case .create:
            guard success else { return [refusal(response)] }
            guard let location = response.location, let resource = Self.resolve(location: location, against: settings.url) else {
                return [.fail(protocolError("answered the creation of the upload with \(response.status) but no usable Location"))]
            }
            let offset = response.uploadOffset ?? 0
            guard offset <= settings.size else { return [.fail(offsetError(offset))] }
            learn(resource: resource, offset: offset)
            return [.record(protocolUsed ?? .tus, resource: resource, offset: offset)] + next()
        case .offset:
            if (400...499).contains(response.status), !HTTPStatusClass.isTransient(response.status) {
                // The server forgot the upload (404, 410: it expired or was removed) or will not
                // resume it (another 4xx): start a new one from 0, as the common tus clients do,
                // instead of failing the job and losing what the server may still accept.
                learn(resource: nil, offset: 0)
                return [.record(protocolUsed ?? .tus, resource: nil, offset: 0)] + next()
            }
            guard success else { return [refusal(response)] }
            guard let offset = response.uploadOffset else {
                return [.fail(protocolError("answered the offset request with \(response.status) but no Upload-Offset"))]
            }
            guard offset <= settings.size else { return [.fail(offsetError(offset))] }
            learn(resource: resource, offset: offset)
            if protocolUsed == .ietf, response.uploadComplete == true, offset == settings.size {
                return [.record(.ietf, resource: resource, offset: offset), .complete(result(response, location: resource?.absoluteString))]
            }
            return [.record(protocolUsed ?? .tus, resource: resource, offset: offset)] + next()
        case .append(let range):
            if response.status == 409 {
                guard countConflict() <= Self.maxConflicts else {
                    return [.retryLater(.transient(protocolError("kept answering 409 (offset mismatch) to appends at offset \(range.lowerBound)")))]
                }
                forgetOffset()
                return next()
            }
            guard success else { return [refusal(response)] }
            resetConflicts()
            if protocolUsed == .ietf, range.upperBound == settings.size {
                learn(resource: resource, offset: settings.size)
                return [.record(.ietf, resource: resource, offset: settings.size), .complete(result(response, location: resource?.absoluteString))]
            }
            let offset = response.uploadOffset ?? range.upperBound
            guard offset >= range.lowerBound, offset <= range.upperBound else { return [.fail(offsetError(offset))] }
            learn(resource: resource, offset: offset)
            if Self.stalled(range, offset: offset) {
                // Sending the same bytes again at once would loop as fast as the server answers: the
                // attempt ends, and the retry policy's back-off and attempt limit decide what follows.
                return [.retryLater(.transient(protocolError(
                    "answered an append of bytes \(range.lowerBound)-\(range.upperBound - 1) with \(response.status) "
                        + "but its Upload-Offset (\(offset)) did not advance")))]
            }
            if protocolUsed == .tus, offset == settings.size {
                return [.record(.tus, resource: resource, offset: offset), .complete(result(response, location: resource?.absoluteString))]
            }
            return [.record(protocolUsed ?? .tus, resource: resource, offset: offset)] + next()
        }
    }

    /// Whether a 2xx answer to an append of `range` that reports `offset` took none of its bytes.
    static func stalled(_ range: Range<Int64>, offset: Int64) -> Bool {
        !range.isEmpty && offset <= range.lowerBound
    }

    /// The upload resource a creation's `Location` names: absolute, scheme-relative (`//host/…`) or
    /// relative, resolved against the request's URL. nil when it is not a URL of the request's own
    /// scheme (no downgrade from https, nothing but http and https). Whether the daemon may contact
    /// its host is for the host rules, checked before every request.
    static func resolve(location: String, against base: URL) -> URL? {
        let text = location.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty, let resolved = URL(string: text, relativeTo: base)?.absoluteURL,
            resolved.scheme?.lowercased() == base.scheme?.lowercased(), HTTPScheme.isAllowed(resolved),
            let host = resolved.host(percentEncoded: false), !host.isEmpty
        else { return nil }
        return resolved
    }

    private func protocolError(_ what: String) -> JobError {
        JobError(
            code: .protocolViolation,
            message: "the server at \(Redaction.url(settings.url)) \(what): upload with --resumable off to send the file in one request")
    }

    private func offsetError(_ offset: Int64) -> JobError {
        protocolError("reported an offset (\(offset)) outside the file's \(settings.size) bytes")
    }
}
