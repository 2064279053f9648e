import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns an attempt's request plan into a `URLRequest`, and a `URLResponse` into what the
/// attempt judges. The one place a URL becomes a request.
enum RequestBuilder {
    static func request(_ plan: DownloadAttempt.RequestPlan, for transfer: TransferRequest) -> URLRequest {
        var request = URLRequest(url: plan.url)
        request.httpMethod = "GET"
        // FoundationNetworking restarts this timer whenever bytes arrive: it is an idle timeout. It
        // turns it into whole milliseconds in an Int (so it traps on huge values, and a fraction of a
        // second becomes 0): clamped to whole seconds within the documented range.
        request.timeoutInterval = HTTPScheme.timeout(transfer.limits.idleTimeout)
        for (name, value) in transfer.headers where !(plan.withholdCredentials && Redaction.isSecretName(name)) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        // Byte offsets must mean file offsets.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if let range = plan.range {
            request.setValue("bytes=\(range.lowerBound)-\(range.upperBound)", forHTTPHeaderField: "Range")
        }
        if let validator = plan.ifRange {
            request.setValue(validator, forHTTPHeaderField: "If-Range")
        } else if (plan.range?.lowerBound ?? 0) == 0 {
            for (name, value) in transfer.conditionalHeaders { request.setValue(value, forHTTPHeaderField: name) }
        }
        if let pem = transfer.cacert { Trust.add(pem, to: &request, job: transfer.jobID) }
        return request
    }

    /// What the attempt needs of a response; nil when it is not HTTP. `file` is the partial
    /// file, whose filesystem's free space is read when `withFreeSpace` (the attempt checks the
    /// announced size against it once per version, not on every segment).
    static func response(_ response: URLResponse, file: PartialFile, withFreeSpace: Bool) -> DownloadAttempt.Response? {
        guard let http = response as? HTTPURLResponse else { return nil }
        let interim = (100...199).contains(http.statusCode)
        return DownloadAttempt.Response(
            status: http.statusCode,
            url: http.url,
            contentLength: http.value(forHTTPHeaderField: "Content-Length"),
            expectedContentLength: http.expectedContentLength >= 0 ? http.expectedContentLength : nil,
            contentEncoding: http.value(forHTTPHeaderField: "Content-Encoding"),
            contentRange: http.value(forHTTPHeaderField: "Content-Range"),
            validator: strongValidator(http),
            reprDigest: http.value(forHTTPHeaderField: "Repr-Digest"),
            contentDigest: http.value(forHTTPHeaderField: "Content-Digest"),
            retryAfter: http.value(forHTTPHeaderField: "Retry-After"),
            freeBytes: withFreeSpace && !interim ? file.directory.availableBytes() : nil,
            directory: file.directory.path)
    }

    /// A strong ETag, else a Last-Modified date (strong enough for If-Range per RFC 9110 when
    /// it is at least a second older than the response's Date; we accept it as the server's word).
    static func strongValidator(_ response: HTTPURLResponse) -> String? {
        if let etag = response.value(forHTTPHeaderField: "ETag"), etag.hasPrefix("\"") {
            return etag
        }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }
}
