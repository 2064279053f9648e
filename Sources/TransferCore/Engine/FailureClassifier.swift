import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Which failures a later attempt may cure and which end the job, with messages that say the
/// cause and the fix. Pure: it only reads what it is given.
enum FailureClassifier {
    /// A failed disk operation: a full disk or quota may be freed (the job waits and retries);
    /// anything else (EIO, a read-only filesystem, permissions) fails the job.
    static func disk(_ error: FileIOError, writing path: String) -> TransferFailure {
        let hint: String
        switch error.errno {
        case ENOSPC, EDQUOT:
            return .transient(
                JobError(code: .diskFull, message: "cannot write \(path): \(error) (free some space on that filesystem: the job retries)"))
        case EACCES, EPERM: hint = "make the directory writable by the transferd service, then submit again"
        case ENOENT: hint = "the directory was removed: create it again, then submit the job again"
        case EROFS: hint = "the filesystem is read-only: remount it read-write or choose another destination"
        default: hint = "check the disk and the kernel log (dmesg), then submit the job again"
        }
        return .permanent(JobError(code: .disk, message: "cannot write \(path): \(error) (\(hint))"))
    }

    /// A destination that may no longer be written (a root was removed from the configuration, a
    /// symbolic link or a foreign file appeared, the owner lost access): the job fails.
    static func refusal(_ error: DestinationError, destination: String) -> TransferFailure {
        .permanent(JobError(code: .disk, message: "cannot write \(destination): \(error.message)"))
    }

    /// An answer other than 200, 206 or 416: retried when the server is overloaded or restarting,
    /// otherwise the job fails.
    static func status(_ status: Int, retryAfter: String?, url: URL) -> TransferFailure {
        let reason = HTTPURLResponse.localizedString(forStatusCode: status)
        let what = "the server answered \(status) (\(reason)) for \(Redaction.url(url))"
        if HTTPStatusClass.isTransient(status) {
            return .transient(JobError(code: .httpStatus, message: what, httpStatus: status), retryAfter: RetryAfter.seconds(retryAfter))
        }
        let fix: String
        switch status {
        case 401:
            fix = "the server asks for a login: give the credentials in the URL (https://USER:PASSWORD@host/…) "
                + "or as a header (-H 'Authorization: …'); if you gave them, check them"
        case 403: fix = "check the credentials (an Authorization header) and that you may fetch it"
        case 407:
            fix = "the proxy asks for a login: put its credentials in the proxy's URL (http_proxy or https_proxy: "
                + "http://USER:PASSWORD@proxy:port)"
        case 404, 410: fix = "check the URL"
        case 400 where url.scheme?.lowercased() == "https":
            fix = "check the URL and the request headers; a server that wants a client certificate answers so too: "
                + "configure one for \(url.host ?? "the host") in client_certificates"
        default: fix = "check the URL and the request headers"
        }
        return .permanent(JobError(code: .httpStatus, message: "\(what): \(fix), then submit again", httpStatus: status))
    }

    /// A request that failed without an HTTP answer. Network trouble is retried; TLS and URL
    /// problems are not.
    static func network(_ error: any Error, url: URL, idleTimeout: Double) -> TransferFailure {
        let host = url.host ?? "the server"
        let description = (error as NSError).localizedDescription
        switch (error as? URLError)?.code {
        case .timedOut:
            return .transient(
                JobError(code: .timeout, message: "\(host) sent nothing for \(Int(idleTimeout)) s (the idle timeout, idle_timeout_seconds)"))
        case .cannotFindHost, .dnsLookupFailed:
            return .transient(JobError(code: .dns, message: "cannot resolve \(host): check the host name and this machine's DNS settings"))
        case .cannotConnectToHost:
            return .transient(JobError(code: .connectionRefused, message: "cannot connect to \(host): the server refused the connection or is down"))
        case .networkConnectionLost:
            return .transient(JobError(code: .connectionLost, message: "the connection to \(host) was lost: \(description)"))
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            return .permanent(
                JobError(
                    code: .tls,
                    message: "the secure connection to \(host) failed: \(description); check the server's certificate and this machine's CA certificates"))
        case .httpTooManyRedirects:
            return .permanent(JobError(code: .redirect, message: "\(host) redirected too many times; the server is probably caught in a redirect loop"))
        case .cannotParseResponse, .badServerResponse:
            return .permanent(JobError(code: .protocolViolation, message: "\(host) sent an answer that is not valid HTTP: \(description)"))
        case .badURL, .unsupportedURL:
            return .permanent(JobError(code: .unsupportedURL, message: "\(Redaction.url(url)) cannot be fetched: \(description)"))
        default:
            // FoundationNetworking reports libcurl's certificate and handshake failures as an unknown
            // error carrying libcurl's message: they are recognised by it, and no later attempt cures them.
            if isTLSFailure(description) {
                return .permanent(
                    JobError(
                        code: .tls,
                        message: "the secure connection to \(host) failed: \(description); check the server's certificate and "
                            + "its host name; for a private CA, give its certificate with submit --cacert FILE, or trust it for "
                            + "every job with ca_file in the configuration (or in this machine's CA certificates, then reload)"))
            }
            // libcurl reports response headers beyond its 100 KiB limit as "out of memory".
            if description.localizedCaseInsensitiveContains("out of memory") {
                return .permanent(
                    JobError(
                        code: .protocolViolation,
                        message: "\(host) sent response headers larger than libcurl accepts (100 KiB per header); "
                            + "the server or a proxy in between is misbehaving: check the URL with curl -I"))
            }
            return .transient(JobError(code: .network, message: "the transfer from \(host) failed: \(description)"))
        }
    }

    /// libcurl's messages for a certificate that does not verify (unknown CA, wrong host name,
    /// expired) and for a failed TLS handshake.
    static func isTLSFailure(_ description: String) -> Bool {
        let markers = [
            "SSL certificate problem", "SSL: no alternative certificate subject name", "SSL: certificate subject name",
            "SSL peer certificate", "SSL_connect", "SSL routines", "TLS connect error", "certificate verify failed",
            "unable to set private key file", "could not load PEM client certificate",
        ]
        return markers.contains { description.localizedCaseInsensitiveContains($0) }
    }
}
