import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

extension EngineDelegate {
    /// The process's umask, read once (reading it means setting it, so never do it concurrently).
    static let processUmask: mode_t = {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }()

    /// A failed disk operation: a full disk or quota may be freed (the job waits and retries);
    /// anything else (EIO, a read-only filesystem, permissions) fails the job.
    static func diskFailure(_ error: FileIOError, writing path: String) -> TransferFailure {
        let hint: String
        switch error.errno {
        case ENOSPC, EDQUOT:
            return .transient(
                JobError(code: "disk_full", message: "cannot write \(path): \(error) (free some space on that filesystem: the job retries)"))
        case EACCES, EPERM: hint = "make the directory writable by the transferd service, then submit again"
        case ENOENT: hint = "the directory was removed: create it again, then submit the job again"
        case EROFS: hint = "the filesystem is read-only: remount it read-write or choose another destination"
        default: hint = "check the disk and the kernel log (dmesg), then submit the job again"
        }
        return .permanent(JobError(code: "disk", message: "cannot write \(path): \(error) (\(hint))"))
    }

    /// An answer other than 200, 206 or 416: retried when the server is overloaded or restarting,
    /// otherwise the job fails.
    static func statusFailure(_ response: HTTPURLResponse, url: URL) -> TransferFailure {
        let status = response.statusCode
        let reason = HTTPURLResponse.localizedString(forStatusCode: status)
        let what = "the server answered \(status) (\(reason)) for \(Redaction.url(url))"
        if HTTPStatusClass.isTransient(status) {
            let retryAfter = RetryAfter.seconds(response.value(forHTTPHeaderField: "Retry-After"))
            return .transient(JobError(code: "http_status", message: what, httpStatus: status), retryAfter: retryAfter)
        }
        let fix: String
        switch status {
        case 401, 403: fix = "check the credentials (--header 'Authorization: …') and that you may fetch it"
        case 404, 410: fix = "check the URL"
        default: fix = "check the URL and the request headers"
        }
        return .permanent(JobError(code: "http_status", message: "\(what): \(fix), then submit again", httpStatus: status))
    }

    /// A request that failed without an HTTP answer. Network trouble is retried; TLS and URL
    /// problems are not.
    static func networkFailure(_ error: any Error, context: TransferContext) -> TransferFailure {
        let host = context.request.url.host ?? "the server"
        let description = (error as NSError).localizedDescription
        switch (error as? URLError)?.code {
        case .timedOut:
            return .transient(
                JobError(
                    code: "timeout",
                    message: "\(host) sent nothing for \(Int(context.request.limits.idleTimeout)) s (the idle timeout, idle_timeout_seconds)"))
        case .cannotFindHost, .dnsLookupFailed:
            return .transient(JobError(code: "dns", message: "cannot resolve \(host): check the host name and this machine's DNS settings"))
        case .cannotConnectToHost:
            return .transient(JobError(code: "connection_refused", message: "cannot connect to \(host): the server refused the connection or is down"))
        case .networkConnectionLost:
            return .transient(JobError(code: "connection_lost", message: "the connection to \(host) was lost: \(description)"))
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            return .permanent(
                JobError(
                    code: "tls",
                    message: "the secure connection to \(host) failed: \(description); check the server's certificate and this machine's CA certificates"))
        case .httpTooManyRedirects:
            return .permanent(JobError(code: "redirect", message: "\(host) redirected too many times; the server is probably caught in a redirect loop"))
        case .cannotParseResponse, .badServerResponse:
            return .permanent(JobError(code: "protocol", message: "\(host) sent an answer that is not valid HTTP: \(description)"))
        case .badURL, .unsupportedURL:
            return .permanent(JobError(code: "unsupported_url", message: "\(Redaction.url(context.request.url)) cannot be fetched: \(description)"))
        default:
            // libcurl reports response headers beyond its 100 KiB limit as "out of memory".
            if description.localizedCaseInsensitiveContains("out of memory") {
                return .permanent(
                    JobError(
                        code: "protocol",
                        message: "\(host) sent response headers larger than libcurl accepts (100 KiB per header); "
                            + "the server or a proxy in between is misbehaving: check the URL with curl -I"))
            }
            return .transient(JobError(code: "network", message: "the transfer from \(host) failed: \(description)"))
        }
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
