/// Why a job failed or waits to retry, as sent in `error.code` of a job. The raw values are the
/// stable wire strings: new codes may be added, existing ones never change meaning.
///
/// Whether a failure is retried is decided where it happens (an HTTP status is retried for some
/// statuses only); each case says which way it goes. docs/protocol.md lists the same codes.
public enum JobErrorCode: String, Codable, Sendable, CaseIterable {
    // Retried: the job goes `waiting` and tries again after a back-off.

    /// The server answered with an HTTP status that is not a success. Retried for 408, 429, 500,
    /// 502, 503, 504 and 520–524 (honouring `Retry-After`); not retried for any other status.
    /// The job's error carries the status in `http_status`.
    case httpStatus = "http_status"
    /// Nothing arrived for the idle timeout. Retried.
    case timeout
    /// The transfer stayed below the low-speed limit for the low-speed time. Retried.
    case tooSlow = "too_slow"
    /// The host name did not resolve, also when the host rules needed its addresses; nothing was
    /// connected. Retried.
    case dns
    /// The server refused the connection or is down. Retried.
    case connectionRefused = "connection_refused"
    /// The connection ended before the whole answer arrived. Retried: the next attempt continues
    /// from the last byte written, with `Range` and `If-Range`.
    case connectionLost = "connection_lost"
    /// Another network failure. Retried.
    case network
    /// No space for the announced size, or `ENOSPC` while writing. Retried: the partial file is
    /// kept, and the job continues once space is back.
    case diskFull = "disk_full"

    // Not retried: the job fails.

    /// The TLS handshake or the server's certificate failed. Not retried.
    case tls
    /// More redirects than `max_redirects`, a redirect from https to http, or one to a scheme other
    /// than http and https. Not retried.
    case redirect
    /// An answer that is not valid HTTP, two different `Content-Length` values, response headers
    /// over libcurl's limit, or answers to range requests that contradict each other or the file.
    /// Not retried.
    case protocolViolation = "protocol"
    /// The URL cannot be fetched (not http or https, or refused as malformed by the HTTP client).
    /// Not retried.
    case unsupportedURL = "unsupported_url"
    /// A journaled job holds a value this version refuses, found at start-up; submit it again.
    /// Not retried.
    case invalidJob = "invalid_job"
    /// The host, or an address it resolves to, is refused by the host rules, when an attempt
    /// starts or on a redirect; the message names the rule and the fix. Not retried.
    case hostNotAllowed = "host_not_allowed"
    /// The server's size differs from the size the client expected, or the body ended at another
    /// length than announced. Not retried.
    case sizeMismatch = "size_mismatch"
    /// The file's SHA-256 differs from the one the client expected. Not retried.
    case digestMismatch = "digest_mismatch"
    /// The server compressed the body although asked not to. Not retried.
    case contentEncoding = "content_encoding"
    /// The partial file or the destination could not be written for a reason other than a full
    /// disk (including a destination no longer allowed when an attempt starts); the message names
    /// the path and the cause. Not retried.
    case disk
    /// The destination appeared while downloading, and the job did not ask to overwrite it.
    /// Not retried.
    case destinationExists = "destination_exists"
    /// The job's `max_time_seconds` ended. Not retried.
    case timeLimit = "time_limit"

    /// Never sent by the daemon: what ``JobError/code`` is when the code read is one this version
    /// does not know (a newer daemon's, or a journal record a newer version wrote).
    /// ``JobError/rawCode`` keeps the string that was read.
    case unrecognized

    /// The codes the daemon sends: every case but ``unrecognized``.
    public static var sentCodes: [JobErrorCode] { allCases.filter { $0 != .unrecognized } }
}
