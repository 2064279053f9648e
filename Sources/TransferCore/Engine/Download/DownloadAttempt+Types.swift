import Foundation
import TransferProtocol

extension DownloadAttempt {
    /// Fixed for the attempt.
    struct Settings: Sendable {
        var url: URL
        /// The size the client expects, which the server's must equal.
        var expectedSize: Int64?
        /// Bytes to keep free on the destination's filesystem.
        var diskReserveBytes: Int64 = 0
        /// Redirects followed per request before the attempt fails.
        var maxRedirects = 10
        /// Restarts from byte 0 in one attempt before it fails: a server whose answers contradict
        /// each other would otherwise make it loop.
        var maxRestarts = 3
    }

    /// How the current request ends, once that is known.
    enum Ending: Equatable, Sendable {
        /// The partial file already holds the whole representation (a 416 said so).
        case alreadyComplete
        /// The answer does not continue the partial file: start over from byte 0.
        case restartFromZero
        /// Follow a redirect to this URL once the 3xx answer is done.
        case redirect(URL)
        case failure(TransferFailure)
    }

    /// What the engine does, in the order given.
    enum Action: Equatable, Sendable {
        /// Let the current response's body come (the answer to a response).
        case acceptBody
        /// Cancel the current request: its ending is decided.
        case cancelRequest
        /// Cut the partial file back to 0 bytes and reset its digests: another version follows.
        case startOver(reason: String)
        /// From now on hash with SHA-512 as well (announced before any byte was hashed).
        case hashSHA512
        /// Tell the core what the server answered.
        case report(Report)
        /// Send this request.
        case send(RequestPlan)
        /// Check a redirect's target against the host rules, then feed `redirectChecked`.
        case checkRedirect(URL)
        /// One segment is done: size the next, wait for the backlog to drain, then feed `proceed`.
        case nextSegment
        /// The body is complete: verify and move the file into place.
        case land
        /// Keep the partial file and let the core retry later.
        case retryLater(TransferFailure)
        /// Remove the partial file; the job fails.
        case fail(JobError)
    }

    /// What the core hears about a response.
    struct Report: Equatable, Sendable {
        var totalBytes: Int64?
        var validator: String?
        var startOffset: Int64
        var finalURL: URL?
        var contentEncoding: String? = nil
        /// Whether the server showed it does not take ranges: the file comes over one connection.
        var rangesRefused = false
    }

    /// One request to send.
    struct RequestPlan: Equatable, Sendable {
        var url: URL
        /// The bytes asked for, when ranges are used.
        var range: ClosedRange<Int64>?
        /// The validator sent as If-Range with a range that does not start at 0.
        var ifRange: String?
        /// Whether credential-like headers stay home (a redirect led to another origin).
        var withholdCredentials: Bool
    }

    /// What the engine read from a response.
    struct Response: Equatable, Sendable {
        var status: Int
        var url: URL?
        /// The raw `Content-Length` field (repeated fields joined by commas).
        var contentLength: String?
        /// The length the body will have, when known.
        var expectedContentLength: Int64?
        var contentEncoding: String?
        var contentRange: String?
        /// A strong ETag, else Last-Modified.
        var validator: String?
        var reprDigest: String?
        var contentDigest: String?
        var retryAfter: String?
        /// Free bytes on the destination's filesystem, when known; read only while the attempt
        /// still has to check the announced size against them (`needsFreeSpace`).
        var freeBytes: Int64?
        /// The directory those bytes are free in, for messages.
        var directory: String = ""
    }

    /// What the engine saw of a redirect.
    struct Redirect: Equatable, Sendable {
        /// The URL that answered with the redirect.
        var from: URL
        var target: URL
        /// The raw `Location` field.
        var location: String?
    }
}
