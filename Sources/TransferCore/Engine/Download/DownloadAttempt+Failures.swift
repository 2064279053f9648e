import Foundation
import TransferProtocol

/// The failures a `DownloadAttempt` decides on, each with its cause and what to do about it.
extension TransferFailure {
    static func foreignRedirect(from url: URL, scheme: String) -> TransferFailure {
        .permanent(JobError(
            code: .redirect,
            message: "\(Redaction.url(url)) redirected to a \(scheme.prefix(20)): URL, which was refused: transferd speaks only http and https. "
                + "Ask the server's owner for an http or https link"))
    }

    static func redirectLoop(_ url: URL, most: Int, last: URL) -> TransferFailure {
        .permanent(JobError(
            code: .redirect,
            message: "\(Redaction.url(url)) redirected more than \(most) times "
                + "(last to \(Redaction.url(last))); the server is probably caught in a redirect loop"))
    }

    static func downgrade(from: URL, to target: URL) -> TransferFailure {
        .permanent(JobError(
            code: .redirect,
            message: "\(Redaction.url(from)) redirected to \(Redaction.url(target)), which is not https; "
                + "transferd does not downgrade a secure download. Submit the http URL yourself if you trust it"))
    }

    static func inconsistentRanges(restarts: Int) -> TransferFailure {
        .permanent(JobError(
            code: .protocolViolation,
            message: "the server's answers to range requests do not agree with each other or with the file; gave up after \(restarts) restarts"))
    }

    static func connectionLost(host: String, after offset: Int64, of total: Int64) -> TransferFailure {
        .transient(JobError(code: .connectionLost, message: "the connection to \(host) ended after \(offset) of \(total) bytes"))
    }

    static func untrustedLength(host: String, problem: String) -> TransferFailure {
        .permanent(JobError(
            code: .protocolViolation, message: "\(host) sent \(problem); the answer's length cannot be trusted and nothing was kept"))
    }

    static func unexpectedSize(_ url: URL, announced: Int64, expected: Int64) -> TransferFailure {
        .permanent(JobError(
            code: .sizeMismatch,
            message: "the server says \(Redaction.url(url)) is \(announced) bytes, but \(expected) were expected; "
                + "nothing was kept. Check the URL and the expected size, then submit again"))
    }

    static func noRoom(in directory: String, available: Int64, needed: Int64, reserve: Int64) -> TransferFailure {
        .transient(JobError(
            code: .diskFull,
            message: "\(directory) has \(available) bytes free, but the download needs \(needed) more and "
                + "\(reserve) are kept free (disk_reserve_bytes); free some space: the job retries"))
    }

    static func notHTTP(_ url: URL) -> TransferFailure {
        .permanent(JobError(code: .unsupportedURL, message: "\(Redaction.url(url)) is not an http or https URL; transferd speaks only http and https"))
    }

    static func shortBody(announced: Int64, sent: Int64) -> TransferFailure {
        .permanent(JobError(
            code: .sizeMismatch,
            message: "the server announced \(announced) bytes but sent \(sent); the file was not kept. "
                + "Submit the job again; if it keeps happening, the server is sending a damaged response"))
    }
}
