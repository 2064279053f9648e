import Foundation
import TransferProtocol

/// The whole state of one running upload, and every decision about it: one value, told what
/// happens (`Input`), answering with what the shell is to do (`Action`). Pure: no I/O, no clock
/// (times come in with the inputs), no lock. `UploadRunner` feeds it on the engine's delegate
/// queue, one input at a time, and carries its actions out.
///
/// What to send and what an answer means are `UploadAttempt`'s decisions (the resume table);
/// the machine adds what lies around each request: the host rules for a new origin, the pace of
/// an append, the stop, cancel or failure that may come at any time, and the one end.
///
/// | state | stop, cancel | failure of a limit | the request ended |
/// |---|---|---|---|
/// | `ready`, `checkingHost`, `reading`, `paced` | ends now: `stopped` | ends now: `retryLater` or `fail` | — |
/// | `requesting` | `cancelRequest`, then `closing` | `cancelRequest`, then `closing` | the attempt decides |
/// | `closing` | nothing: the first decision stands | nothing | ends as `closing` decided |
/// | `ended` | nothing | nothing | nothing |
struct UploadMachine {
    /// Where the upload is.
    enum State: Equatable {
        /// Made, its first request not decided yet.
        case ready
        /// A request waits for the host rules' verdict on its URL's origin (`checkHost`).
        case checkingHost(UploadAttempt.Request, HTTPOrigin)
        /// An append's bytes are read from the spool copy (`read`).
        case reading(UploadAttempt.Request)
        /// An append waits until `due` (the monotonic clock's nanoseconds) for its pace (`wake`).
        case paced(UploadAttempt.Request, due: UInt64)
        /// A request is in flight.
        case requesting
        /// The request in flight is being cancelled; once it ended, the upload ends this way.
        case closing(Ending)
        /// It ended: the shell reported its one end; every later input is ignored.
        case ended
    }

    /// How an upload ends that did not end by its own answers.
    enum Ending: Equatable {
        /// Stopped by the core (a pause, a yield, a cancel, shutdown): a plain upload starts again
        /// from byte 0, a resumable one from the offset the server reported.
        case stopped(StopReason)
        /// Failed by a limit the engine enforces (a time limit, the low-speed limit).
        case failed(TransferFailure)
    }

    /// What the shell reads at the moment of an input that may send a request: the time and the
    /// job's rate limit.
    struct Clock: Equatable {
        /// The monotonic clock's nanoseconds.
        var now: UInt64
        /// Bytes per second (nil: no limit).
        var rate: Int64?
    }

    /// What happens to the upload.
    enum Input {
        /// The upload begins (its job URL and spool copy were checked).
        case start(Clock)
        /// The host rules' verdict on the origin of the request that waits for it.
        case hostChecked(HostGuard.Verdict, Clock)
        /// The bytes of the append that waits for them, or why they could not be read.
        case segmentRead(Result<Data, CoreError>)
        /// The pace's timer fired, or the rate limit changed: the waiting append looks again.
        case paceTimerFired(Clock)
        /// The response's headers; nil when it is not HTTP.
        case response(UploadAttempt.Response?, Clock)
        /// Bytes of the response's body.
        case body(Data)
        /// The request in flight ended, with `failure` when it did not get a whole answer.
        case requestEnded(TransferFailure?, Clock)
        /// The user cancelled the job.
        case cancel
        /// The core stops the upload (a pause, a yield, shutdown).
        case stop(StopReason)
        /// The limits monitor found a limit exceeded.
        case fail(TransferFailure)
    }

    /// What the shell is to do.
    enum Action: Equatable {
        /// Check `url`'s host against the host rules (off the delegate queue); answer `hostChecked`.
        case checkHost(URL)
        /// Read bytes `range` of the spool copy (off the delegate queue); answer `segmentRead`.
        case read(Range<Int64>)
        /// Wake the upload at `due` (monotonic nanoseconds), or sooner when its rate changes; answer `paceTimerFired`.
        case wake(at: UInt64)
        /// Send `request` with `body` (nil: none, or the whole spool copy); the server holds
        /// `base` bytes before it, for progress.
        case send(UploadAttempt.Request, body: Data?, base: Int64)
        /// Read the response body; or refuse it (the answer to `response`).
        case acceptBody
        case refuseBody
        /// Cancel the request in flight: its end comes as `requestEnded`.
        case cancelRequest
        /// Keep what was learned: the protocol, the resource, the bytes the server holds.
        case record(UploadProtocol, resource: URL?, offset: Int64)
        /// The server took the file.
        case complete(UploadResponse)
        /// The attempt ends; another may succeed, from the `kept` bytes the server holds.
        case retryLater(TransferFailure, kept: Int64)
        /// The job fails.
        case fail(JobError)
        /// The upload stopped for `reason`, the server holding `kept` bytes.
        case stopped(StopReason, kept: Int64)
    }

    private(set) var state: State = .ready
    private(set) var attempt: UploadAttempt
    /// Spaces the appends to the job's rate limit.
    private(set) var pacer = RatePacer()
    /// The origins the host rules allowed in this attempt: a URL of another origin (a creation's
    /// `Location`, an upload URL kept from an earlier run) is checked before its first request.
    private(set) var admittedOrigins: Set<HTTPOrigin> = []
    /// The low-speed limit's window, which the limits monitor keeps here: when it began and the
    /// bytes the server held then.
    var stallWindow: (start: UInt64, bytes: Int64)?

    init(attempt: UploadAttempt) {
        self.attempt = attempt
    }

    /// Whether the upload runs and may still be stopped or failed (neither closing nor ended).
    var isRunning: Bool {
        switch state {
        case .closing, .ended: return false
        case .ready, .checkingHost, .reading, .paced, .requesting: return true
        }
    }

    /// Takes one input; returns what to do, in order.
    mutating func handle(_ input: Input) -> [Action] {
        switch (input, state) {
        case (_, .ended):
            return []
        case (.start(let clock), .ready):
            return carry(attempt.proceed(), clock)
        case (.hostChecked(let verdict, let clock), .checkingHost(let request, let origin)):
            switch verdict {
            case .allowed:
                admittedOrigins.insert(origin)
                return pace(request, clock)
            case .refused(let message):
                return end(.fail(Self.hostError(request.url, message)))
            case .unresolved(let message):
                return end(.retryLater(.transient(JobError(code: .dns, message: message)), kept: attempt.keptBytes))
            }
        case (.segmentRead(let read), .reading(let request)):
            switch read {
            case .success(let data):
                return begin(request, body: data)
            case .failure(let error):
                return end(.fail(JobError(code: .disk, message: error.message)))
            }
        case (.paceTimerFired(let clock), .paced(let request, let due)):
            guard case .range(let range) = request.body else { return begin(request, body: nil) }
            return paceCheck(request, range, due: due, clock)
        case (.response(let answer, let clock), .requesting):
            return carry(attempt.respond(answer), clock)
        case (.response, _):
            // A late answer to a request being cancelled: its body is not wanted.
            return [.refuseBody]
        case (.body(let data), .requesting), (.body(let data), .closing):
            attempt.received(data)
            return []
        case (.requestEnded(let failure, let clock), .requesting):
            return carry(attempt.requestEnded(failure), clock)
        case (.requestEnded, .closing(let ending)):
            return end(ending)
        case (.cancel, _):
            return close(.stopped(.cancel))
        case (.stop(let reason), _):
            return close(.stopped(reason))
        case (.fail(let failure), _):
            return close(.failed(failure))
        case (.start, _), (.hostChecked, _), (.segmentRead, _), (.paceTimerFired, _), (.body, _), (.requestEnded, _):
            // An answer to a wait the upload no longer has (it stopped meanwhile).
            return []
        }
    }

    // MARK: - Stopping

    /// A stop, a cancel or a failure: the first one decides how the upload ends. With a request
    /// in flight it is cancelled and the upload ends with its end; between requests, at once.
    private mutating func close(_ ending: Ending) -> [Action] {
        switch state {
        case .closing, .ended:
            return []
        case .requesting:
            state = .closing(ending)
            return [.cancelRequest]
        case .ready, .checkingHost, .reading, .paced:
            return end(ending)
        }
    }

    private mutating func end(_ ending: Ending) -> [Action] {
        switch ending {
        case .stopped(let reason):
            return end(.stopped(reason, kept: attempt.keptBytes))
        case .failed(let failure):
            return end(failure.retryable ? .retryLater(failure, kept: attempt.keptBytes) : .fail(failure.error))
        }
    }

    private mutating func end(_ action: Action) -> [Action] {
        state = .ended
        return [action]
    }

    // MARK: - The attempt's actions

    /// The attempt's actions as the shell's: a request to send goes through the host rules and
    /// the pace first; an end ends the machine.
    private mutating func carry(_ actions: [UploadAttempt.Action], _ clock: Clock) -> [Action] {
        var out: [Action] = []
        for action in actions {
            switch action {
            case .send(let request):
                out += admit(request, clock)
            case .acceptBody:
                out.append(.acceptBody)
            case .cancelRequest:
                out.append(.refuseBody)
            case .record(let protocolUsed, let resource, let offset):
                out.append(.record(protocolUsed, resource: resource, offset: offset))
            case .complete(let response):
                out += end(.complete(response))
            case .retryLater(let failure):
                out += end(.retryLater(failure, kept: attempt.keptBytes))
            case .fail(let error):
                out += end(.fail(error))
            }
            if state == .ended { break }
        }
        return out
    }

    /// Sends `request` once its URL's origin passed the host rules in this attempt (the job URL's
    /// was checked before the attempt began).
    private mutating func admit(_ request: UploadAttempt.Request, _ clock: Clock) -> [Action] {
        guard let origin = HTTPOrigin(request.url) else { return end(.fail(Self.hostError(request.url, "the URL has no host"))) }
        if admittedOrigins.isEmpty, let jobOrigin = HTTPOrigin(attempt.settings.url) { admittedOrigins.insert(jobOrigin) }
        guard admittedOrigins.contains(origin) else {
            state = .checkingHost(request, origin)
            return [.checkHost(request.url)]
        }
        return pace(request, clock)
    }

    /// An append waits until the bytes sent so far fit the job's rate limit, then its bytes are read.
    private mutating func pace(_ request: UploadAttempt.Request, _ clock: Clock) -> [Action] {
        guard case .range(let range) = request.body else { return begin(request, body: nil) }
        let wait = pacer.delay(endedAt: range.lowerBound, now: clock.now, rate: clock.rate)
        if wait > 0 { return paceCheck(request, range, due: clock.now + wait, clock) }
        pacer.requestSent(at: clock.now, offset: range.lowerBound)
        state = .reading(request)
        return [.read(range)]
    }

    /// The wait for `due`, looked at again: a lifted limit sends at once, a raised one brings `due` forward.
    private mutating func paceCheck(_ request: UploadAttempt.Request, _ range: Range<Int64>, due: UInt64, _ clock: Clock) -> [Action] {
        let due = pacer.due(due, at: clock.rate)
        guard clock.now < due, clock.rate != nil else {
            pacer.requestSent(at: clock.now, offset: range.lowerBound)
            return pace(request, clock)
        }
        state = .paced(request, due: due)
        return [.wake(at: due)]
    }

    private mutating func begin(_ request: UploadAttempt.Request, body: Data?) -> [Action] {
        state = .requesting
        return [.send(request, body: body, base: attempt.progressBase)]
    }

    /// The failure of an upload whose request would go to a host the rules refuse.
    static func hostError(_ url: URL, _ message: String) -> JobError {
        JobError(code: .hostNotAllowed, message: "the upload was not sent to \(Redaction.url(url)): \(message)")
    }
}
