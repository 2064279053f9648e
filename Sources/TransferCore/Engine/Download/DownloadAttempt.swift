import Foundation
import TransferProtocol

/// The decisions of one download attempt, as a value: it takes what happened (a response's
/// status and headers, body bytes written, a redirect, the end of a request, a failure found
/// elsewhere) and returns what to do next. It performs no I/O, reads no clock and knows nothing of
/// URLSession: the engine feeds it and carries out its actions, in order.
///
/// An attempt runs requests one after the other: a ranged segment at a time while the server
/// honours ranges, a new request after a redirect, a request from byte 0 when the server's
/// answer does not continue the partial file. The resume rules of the design notes are the cases
/// of `respond`; how a request ends is `end`.
///
/// How a request ends is decided at most once (`ending`), and the first decision stands, except
/// that a failure replaces a decision to restart or to follow a redirect: those need another
/// request, which the failure forbids.
struct DownloadAttempt: Sendable {
    let settings: Settings
    /// Bytes in the partial file, all of them the file's bytes.
    private(set) var offset: Int64
    private(set) var totalBytes: Int64?
    private(set) var validator: String?
    /// Whether requests ask for bounded segments; off once the server shows it ignores ranges.
    private(set) var rangesUsable = true
    /// The size of the next segment asked for; the engine sizes it between its bounds.
    var segmentBytes: Int64
    /// Where requests stop: the first byte other connections fetch (a download over several
    /// connections, `SegmentPlan.leadEnd`); nil: the file's end. `DownloadMachine` sets it.
    private(set) var rangeLimit: Int64?
    private(set) var announcedDigest: AnnouncedDigest?
    /// Where the last redirect led, when the answer came from elsewhere than the job's URL.
    private(set) var finalURL: URL?
    /// Where the attempt's redirects led: its later requests (the next ranges) go there directly,
    /// instead of through the redirects again.
    private var followed: URL?
    /// The content coding of the bytes as sent, when the server used one (nil: identity).
    private(set) var contentEncoding: String?
    private(set) var ending: Ending?
    /// The status of the current request's answer; 0 before it.
    private(set) var status = 0
    /// Whether a request is out (sent, and its end not yet fed).
    private(set) var requestOut = false
    private var segmentEnd: Int64?
    private var restarts = 0
    private var redirects = 0
    private(set) var credentialsWithheld = false
    private var checkedSpace = false
    private var reportedResponse = false
    /// Set once the attempt has landed, failed or given up: later inputs change nothing.
    private(set) var isOver = false

    init(
        settings: Settings, offset: Int64, totalBytes: Int64?, validator: String?, announcedDigest: AnnouncedDigest? = nil,
        segmentBytes: Int64
    ) {
        self.settings = settings
        self.offset = offset
        self.totalBytes = totalBytes
        self.validator = validator
        self.announcedDigest = announcedDigest
        self.segmentBytes = segmentBytes
    }

    /// Whether body bytes arriving now are the file's: only a 200 or 206 whose ending is open.
    /// An error page after a refused answer (which FoundationNetworking may still deliver) never is.
    var acceptsBody: Bool {
        requestOut && ending == nil && (status == 200 || status == 206)
    }

    /// Whether the next answer's size is still to be checked against the free space (once per
    /// version of the file): only then does the engine read it.
    var needsFreeSpace: Bool { !checkedSpace }

    /// Whether the attempt decided to fail (it ends at the next opportunity).
    var hasFailed: Bool {
        if case .failure? = ending { return true }
        return false
    }

    /// The host of the job's URL, for messages.
    private var host: String { settings.url.host ?? "the server" }

    // MARK: - Inputs

    /// The first request of the attempt, or the next after a pause or a segment.
    mutating func proceed() -> [Action] {
        guard !isOver else { return [] }
        return nextRequest(following: nil)
    }

    /// Body bytes were written to the partial file.
    mutating func wrote(_ count: Int) {
        offset += Int64(count)
    }

    /// Requests stop at `limit` (nil: the file's end), where other connections' parts begin.
    mutating func limitRequests(to limit: Int64?) {
        rangeLimit = limit
    }

    /// Bytes from `offset` up to `end` are in the file already, fetched by other connections.
    mutating func skipped(to end: Int64) {
        offset = max(offset, end)
    }

    /// A failure found outside the request's own callbacks: a disk write, a deadline, the
    /// low-speed limit. A request out is cancelled; between requests, the next one is not sent.
    mutating func failed(_ failure: TransferFailure) -> [Action] {
        guard !isOver, decide(.failure(failure)) else { return [] }
        return requestOut ? [.cancelRequest] : []
    }

    /// Cutting the partial file back failed. While a response is being answered (`answering`)
    /// its request is cancelled; otherwise the attempt ends at once.
    mutating func startOverFailed(_ failure: TransferFailure, answering: Bool) -> [Action] {
        if answering {
            ending = .failure(failure)
            return [.cancelRequest]
        }
        requestOut = false
        return end(failure)
    }

    /// A redirect answer; FoundationNetworking is always told not to follow it itself.
    mutating func redirected(_ redirect: Redirect) {
        guard !isOver else { return }
        redirects += 1
        // Judged on the Location field itself: FoundationNetworking turns some targets (file:…)
        // into a request to the same server before the engine sees them.
        if let location = redirect.location, let scheme = HTTPScheme.foreignScheme(ofLocation: location) {
            _ = decide(.failure(.foreignRedirect(from: redirect.from, scheme: scheme)))
            return
        }
        if redirects > settings.maxRedirects {
            _ = decide(.failure(.redirectLoop(settings.url, most: settings.maxRedirects, last: redirect.target)))
            return
        }
        let from = redirect.from
        let target = redirect.target
        if from.scheme?.lowercased() == "https", target.scheme?.lowercased() != "https" {
            _ = decide(.failure(.downgrade(from: from, to: target)))
            return
        }
        if target.host?.lowercased() != from.host?.lowercased() || target.port != from.port || target.scheme != from.scheme {
            // Authorization, Cookie and other credential-like headers stay with their origin.
            credentialsWithheld = true
        }
        _ = decide(.redirect(target))
    }

    /// The host rules judged a redirect's target: refused, or asked with a new request.
    mutating func redirectChecked(_ target: URL, refused: TransferFailure?) -> [Action] {
        guard !isOver else { return [] }
        if let refused { return end(refused) }
        // Dot segments resolved, as libcurl would send them ("sub/../x" is "x").
        let resolved = target.standardized
        finalURL = resolved
        followed = resolved
        return nextRequest(following: resolved)
    }

    /// The current request ended: `failure` is how it failed without an HTTP answer, if it did.
    mutating func requestEnded(_ failure: TransferFailure?) -> [Action] {
        guard !isOver else { return [] }
        requestOut = false
        switch ending {
        case .alreadyComplete?:
            return finish()
        case .restartFromZero?:
            restarts += 1
            guard restarts <= settings.maxRestarts else {
                return end(.inconsistentRanges(restarts: restarts))
            }
            ending = nil
            validator = nil
            totalBytes = nil
            startOver()
            return [.startOver(reason: "the server's ranged answer did not continue the file")] + nextRequest(following: nil)
        case .failure(let decided)?:
            return end(decided)
        case .redirect(let target)?:
            ending = nil
            return [.checkRedirect(target)]
        case nil:
            break
        }
        if var failure {
            if let totalBytes, failure.retryable {
                failure.error.message += " (after \(offset) of \(totalBytes) bytes)"
            }
            return end(failure)
        }
        if status == 206, let segmentEnd, offset - 1 == segmentEnd, let totalBytes, offset < totalBytes {
            return [.nextSegment]
        }
        if let totalBytes, offset < totalBytes {
            return end(.connectionLost(host: host, after: offset, of: totalBytes))
        }
        return finish()
    }

    // MARK: - The answer

    /// The answer to the current request (nil when it is not HTTP). The actions end with
    /// `acceptBody` or `cancelRequest`, the engine's answer to the response.
    ///
    /// The resume table of the design notes:
    ///
    /// | answer | partial file | what happens |
    /// |---|---|---|
    /// | 200 | empty | the body is the file |
    /// | 200 | holds bytes | the server ignored the range or the file changed: start over from 0, never append |
    /// | 206, `Content-Range` starts at the offset, same size and validator | any | append |
    /// | 206 that starts elsewhere, or no valid `Content-Range` | any | ranges are not trusted: start over with one plain request |
    /// | 206 with another total size, or another validator than If-Range asked for | any | another version: start over |
    /// | 206 without any validator, not the whole file | any | later ranges could mix versions: start over with one plain request |
    /// | 416 whose total is the offset, same version (or an empty file) | complete | land without a body |
    /// | 416 otherwise | any | start over (a plain request when the range started at 0) |
    /// | 1xx (not 101) | any | an interim answer: wait for the final one |
    /// | another status | any | a failure; retried when the status is transient (`HTTPStatusClass`) |
    mutating func respond(_ response: Response?) -> [Action] {
        guard !isOver, requestOut, ending == nil else { return [.cancelRequest] }
        guard let response else {
            return refuse(.permanent(JobError(code: .protocolViolation, message: "the server's answer is not HTTP")))
        }
        // An interim answer (100 Continue, 103 Early Hints…): the final one follows on the same
        // request, as HTTP says. 101 would switch protocols, which no download asks for.
        if (100...199).contains(response.status), response.status != 101 { return [.acceptBody] }
        status = response.status
        if let lengths = response.contentLength, let problem = ContentLength.conflict(lengths) {
            // RFC 9112 §6.3: differing lengths make the framing unknowable; the body cannot be trusted.
            return refuse(.untrustedLength(host: host, problem: problem))
        }
        if let url = response.url, url != settings.url { finalURL = url }
        // A content coding sent although `identity` was asked for: the file is the bytes as sent
        // (libcurl does not decode them, see curl_decoding.c), as curl and wget save them.
        contentEncoding = ContentCoding.named(response.contentEncoding)
        var actions: [Action] = []
        switch response.status {
        case 200:
            // The server ignores ranges (or the file changed): the body is the whole file.
            rangesUsable = false
            if offset > 0 {
                startOver()
                actions.append(.startOver(reason: "the server answered 200 to a resume"))
            }
            totalBytes = response.expectedContentLength
        case 206:
            switch rangeFit(response, from: offset) {
            case .misplaced, .unvalidated:
                // The server's ranges cannot be trusted, or a later range could come from a
                // changed file: fetch the whole file in one piece instead of stitching ranges.
                rangesUsable = false
                return restart()
            case .otherVersion:
                return restart()
            case .fits(let range):
                totalBytes = range.total ?? totalBytes
                segmentEnd = range.end
            }
        case 416:
            let total = UnsatisfiedRange(response.contentRange)?.total
            let sameVersion = validator != nil && (response.validator == nil || response.validator == validator)
            if let total, total == offset, offset == 0 || sameVersion {
                // Everything is here already (or the file is empty).
                totalBytes = total
                ending = .alreadyComplete
                return [.cancelRequest]
            }
            // A server that cannot satisfy a range from byte 0 gets a plain request next.
            if offset == 0 { rangesUsable = false }
            return restart()
        default:
            return refuse(FailureClassifier.status(response.status, retryAfter: response.retryAfter, url: settings.url))
        }
        // What the server says the representation's digest is. Content-Digest describes the body
        // sent, which for a 200 (without content coding) is the whole representation.
        if let announced = AnnouncedDigest.parse(response.reprDigest, header: "Repr-Digest")
            ?? (response.status == 200 ? AnnouncedDigest.parse(response.contentDigest, header: "Content-Digest") : nil)
        {
            announcedDigest = announced
            if announced.algorithm == .sha512, offset == 0 { actions.append(.hashSHA512) }
        }
        if let failure = checkSize(response) { return actions + refuse(failure) }
        let answered = response.validator ?? validator
        // Report the first answer, and any that changes what a resume depends on.
        if !reportedResponse || answered != validator || offset == 0 || response.status == 200 {
            reportedResponse = true
            actions.append(.report(Report(
                totalBytes: totalBytes, validator: answered, startOffset: offset, finalURL: finalURL, contentEncoding: contentEncoding,
                rangesRefused: !rangesUsable)))
        }
        validator = answered
        return actions + [.acceptBody]
    }

    /// Ends the current request with a failure decided from its answer.
    private mutating func refuse(_ failure: TransferFailure) -> [Action] {
        ending = .failure(failure)
        return [.cancelRequest]
    }

    /// Ends the current request to start over from byte 0 once it is done.
    private mutating func restart() -> [Action] {
        ending = .restartFromZero
        return [.cancelRequest]
    }

    /// Checks a newly announced size against the client's expectation and, once per version,
    /// against the free space.
    private mutating func checkSize(_ response: Response) -> TransferFailure? {
        guard let totalBytes else { return nil }
        if let expected = settings.expectedSize, expected != totalBytes {
            return .unexpectedSize(settings.url, announced: totalBytes, expected: expected)
        }
        guard !checkedSpace else { return nil }
        checkedSpace = true
        let needed = totalBytes - offset
        guard let available = response.freeBytes, available - settings.diskReserveBytes < needed else { return nil }
        return .noRoom(in: response.directory, available: available, needed: needed, reserve: settings.diskReserveBytes)
    }

    // MARK: - Steps

    /// The state of a partial file cut back to 0 bytes: the `startOver` action does it on disk.
    private mutating func startOver() {
        offset = 0
        // A new version: digests announced for the old one no longer apply.
        announcedDigest = nil
        checkedSpace = false
    }

    /// Records how the current request ends, unless that is decided already. Returns whether
    /// this decision stands.
    private mutating func decide(_ decision: Ending) -> Bool {
        switch (ending, decision) {
        case (nil, _), (.restartFromZero?, .failure), (.redirect?, .failure):
            ending = decision
            return true
        default:
            return false
        }
    }

    /// Asks for the body from the offset, or, when the partial file already holds it all,
    /// finishes without asking. `redirect` is where a redirect of the current request leads.
    private mutating func nextRequest(following redirect: URL?) -> [Action] {
        if case .failure(let failure)? = ending { return end(failure) }
        if let totalBytes, offset >= totalBytes { return finish() }
        if redirect == nil {
            redirects = 0
            // Continuing where redirects led keeps what they decided about credentials.
            if followed == nil { credentialsWithheld = false }
        }
        let url = redirect ?? followed ?? settings.url
        // Nothing but http and https ever reaches libcurl, which FoundationNetworking would
        // otherwise let speak FTP and more.
        guard HTTPScheme.isAllowed(url) else {
            return end(.notHTTP(url))
        }
        var range: ClosedRange<Int64>?
        var ifRange: String?
        // One bounded segment at a time while the server honours ranges: a request can then never
        // queue more than a segment in memory, however fast the network. Ranges stay usable past
        // byte 0 only with a validator (see `respond`), and a resume without one starts at 0, so
        // segments never mix versions.
        if rangesUsable {
            var last = offset + segmentBytes - 1
            if let totalBytes { last = min(last, totalBytes - 1) }
            if let rangeLimit, rangeLimit > offset { last = min(last, rangeLimit - 1) }
            range = offset...last
            if offset > 0 { ifRange = validator }
        }
        ending = nil
        status = 0
        segmentEnd = nil
        requestOut = true
        return [.send(RequestPlan(url: url, range: range, ifRange: ifRange, withholdCredentials: credentialsWithheld))]
    }

    /// The body has ended: land the file if it has exactly the announced size.
    private mutating func finish() -> [Action] {
        isOver = true
        if let totalBytes, totalBytes != offset {
            return [.fail(TransferFailure.shortBody(announced: totalBytes, sent: offset).error)]
        }
        return [.land]
    }

    /// Ends the attempt: a retryable failure keeps the partial file for the next one.
    private mutating func end(_ failure: TransferFailure) -> [Action] {
        isOver = true
        requestOut = false
        return failure.retryable ? [.retryLater(failure)] : [.fail(failure.error)]
    }
}
