/// The whole state of one running download, as a value: where it is (`State`: fetching, held
/// back by back-pressure, closing for a cancel or a stop, held for one on its way, ending), the attempt (`DownloadAttempt`),
/// the helper connections (`HelperConnections`), the parts kept from an earlier attempt, where the
/// attempt's request out ends, its pace and the windows its limits are measured over. It alone
/// decides where the attempt's requests stop (`DownloadAttempt.rangeLimit`): where the helpers'
/// parts begin. It performs no I/O, reads no clock (times come in as arguments) and takes no lock:
/// the runner feeds it on the delegate queue, a cancel or a stop from the core included (posted
/// there), and carries out what it returns.
struct DownloadMachine: Sendable {
    /// Where the attempt stands against the helpers' parts, before its next request.
    enum Position: Equatable, Sendable {
        /// Its next request is its own range (no helpers, or it has not reached them).
        case own
        /// Its offset is where the helpers' parts begin.
        case atParts
        /// It went past where the parts begin (`leadEnd`), which the plan never allows: the
        /// helpers closed and it fetches the rest alone. Their requests are to be cancelled.
        case lostTrack(leadEnd: Int64)
    }

    /// What the attempt does on reaching the next part.
    enum PartStep: Equatable, Sendable {
        /// The whole file is behind it.
        case finished
        /// The part's helper still fetches it: wait for a wake-up.
        case wait
        /// Take these bytes (maybe none) into the digest, then go on past them.
        case absorb(ByteRange)
        /// The part does not begin at the attempt's offset: the helpers closed and it fetches the
        /// rest alone. Their requests are to be cancelled.
        case misplaced(ByteRange)
    }

    /// Where the transfer is (`DownloadMachine+State`): changed only by `handle(_:)` and `ownEnd(granted:)`.
    private(set) var state: State = .fetching
    var attempt: DownloadAttempt
    /// The helper connections, once the server's first answer allowed them (`startHelpers`). The
    /// runner changes them only through their own decisions (`HelperConnections`' inputs).
    var helpers: HelperConnections?
    /// Ranges past the offset kept from earlier attempts, until the helpers start with them.
    private(set) var keptParts: [ByteRange] = []
    /// Where the attempt's current (or last) request ends, exclusive.
    private(set) var leadAsked: Int64 = 0
    /// The connections the job asked for (`segments`): the attempt's and its helpers'.
    let connections: Int
    /// Spaces the attempt's requests to the job's rate limit.
    var pacer = RatePacer()
    /// The start of the window the low-speed limit measures: a time and the progress then.
    var stallWindow: (start: UInt64, offset: Int64)
    /// When the transfer last got further (or sent a request), and its progress then: the idle
    /// limit the limits monitor holds, whatever FoundationNetworking's own timer does.
    var lastProgress: (time: UInt64, offset: Int64)

    /// `now`: the monotonic clock's nanoseconds as the transfer begins.
    init(attempt: DownloadAttempt, keptParts: [ByteRange], connections: Int, now: UInt64) {
        self.attempt = attempt
        self.connections = connections
        self.stallWindow = (now, attempt.offset)
        self.lastProgress = (now, attempt.offset)
        if connections > 1, let first = keptParts.first {
            // The attempt's requests stop where the kept ranges begin; the helpers start with them.
            self.keptParts = keptParts
            self.attempt.limitRequests(to: first.start)
        }
    }

    /// Where the attempt's range is still unasked: past its offset, past its request out, and
    /// past a part it is taking into the digest (its offset jumps there once it has).
    var leadFrom: Int64 {
        max(attempt.offset, leadAsked, helpers?.absorbing?.end ?? 0)
    }

    /// Bytes of the file fetched: the attempt's offset and, while the helpers are open, their
    /// bytes past it. What a checkpoint's progress counts.
    var progress: Int64 {
        attempt.offset + (helpers.map { $0.isClosed ? 0 : $0.bytesAhead } ?? 0)
    }

    /// The ranges past the attempt's offset that a checkpoint records: the helpers' while they are
    /// open (once closed, the file may have started over, and they are not recorded).
    var checkpointParts: [ByteRange] {
        helpers.map { $0.isClosed ? [] : $0.ranges } ?? []
    }

    /// A checkpoint recording `parts` (`checkpointParts`) began.
    mutating func checkpointStarted(_ parts: [ByteRange]) {
        if helpers?.isClosed == false { helpers?.checkpointed(parts) }
    }

    /// The ranges a later attempt keeps once the transfer stops or is interrupted, after the
    /// helpers closed with `closed` in the file: those when the partial file was `synced`, else
    /// what the last checkpoint recorded (or what was kept before the helpers started).
    func partsKept(closed: [ByteRange], synced: Bool) -> [ByteRange] {
        synced ? closed : helpers?.lastCheckpointParts ?? keptParts
    }

    /// The attempt sent a request for `range` (nil: the rest of the file) at `now`: the pace,
    /// the low-speed window and the idle limit count from here.
    mutating func requestSent(_ range: ClosedRange<Int64>?, now: UInt64) {
        leadAsked = range.map { $0.upperBound + 1 } ?? attempt.offset
        stallWindow = (now, attempt.offset)
        lastProgress = (now, attempt.offset)
        pacer.requestSent(at: now, offset: attempt.offset)
    }

    // MARK: - State (see `DownloadMachine+State`)

    /// Moves the transfer by `input` and returns what the shell is to do.
    mutating func handle(_ input: Input) -> [Action] {
        switch (input, state) {
        case (.cancel, _):
            return close(.cancelled)
        case (.stop(let reason), _):
            return close(.stopped(reason))
        case (.backlogHigh, .fetching):
            state = .backedUp
            return [.cancelLeadRequest]
        case (.drained, .fetching), (.drained, .backedUp):
            state = .fetching
            return [.proceed]
        case (.drained, .closing(let ending)), (.settled, .closing(let ending)):
            state = .ending
            return [.finish(ending)]
        case (.backlogHigh, _), (.drained, _), (.settled, _):
            return []
        }
    }

    /// A cancel or a stop from the core: a running transfer closes, one held for it ends now, and
    /// one closing or ending already keeps the end it has.
    private mutating func close(_ ending: Ending) -> [Action] {
        switch state {
        case .fetching, .backedUp:
            state = .closing(ending)
            return [.cancelRequests]
        case .held:
            state = .ending
            return [.cancelRequests, .finish(ending)]
        case .closing, .ending:
            return []
        }
    }

    /// The attempt came to its own end; `granted` is whether it claimed the end before the core
    /// did (`DownloadContext.EndClaim`).
    mutating func ownEnd(granted: Bool) -> OwnEnd {
        switch state {
        case .fetching, .backedUp:
            state = granted ? .ending : .held
            return granted ? .granted : .held
        case .closing(let ending):
            state = .ending
            return .finish(ending)
        case .held, .ending:
            return .ignored
        }
    }

    // MARK: - Helpers

    /// After the attempt accepted an answer: whether helpers start, when the job asked for several
    /// connections and the answer allows them (a 206 of a known size with a validator), unless a
    /// rate limit paces the job (`paced`). Kept ranges that do not match where the attempt's
    /// requests stop are dropped, and it fetches without them.
    mutating func startHelpers(paced: Bool, minimumSplit: Int64) -> Bool {
        guard helpers == nil, connections > 1, attempt.status == 206, attempt.rangesUsable, attempt.validator != nil,
            let total = attempt.totalBytes, !paced
        else { return false }
        let plan = SegmentPlan(total: total, prefix: attempt.offset, kept: keptParts, minimumSplit: minimumSplit)
        keptParts = []
        guard plan.leadEnd == attempt.rangeLimit ?? total else {
            attempt.limitRequests(to: nil)
            return false
        }
        helpers = HelperConnections(plan: plan, width: connections - 1)
        return true
    }

    /// Gives helper `worker` a part (`HelperConnections.assign`); the attempt's requests then stop
    /// where the parts begin. False when nothing is worth splitting.
    mutating func assignHelper(_ worker: Int) -> Bool {
        let from = leadFrom
        guard helpers?.assign(worker, leadFrom: from) == true, let leadEnd = helpers?.plan.leadEnd else { return false }
        attempt.limitRequests(to: leadEnd)
        return true
    }

    /// The answer to helper `worker`'s request, judged by the attempt's rules.
    mutating func helperAnswered(_ worker: Int, _ response: DownloadAttempt.Response?) -> HelperConnections.Answer {
        helpers?.answer(worker, response, attempt: attempt) ?? .cancel
    }

    /// Closes the helpers (their requests are to be cancelled): the ranges past the attempt's offset
    /// that are in the file, or the kept ones when there were no helpers open.
    mutating func closeHelpers() -> [ByteRange] {
        helpers?.close() ?? keptParts
    }

    /// The partial file starts over from byte 0: what helpers fetched or an earlier attempt kept
    /// is not the new version's, and the attempt's requests run to the file's end.
    mutating func startedOver() {
        _ = closeHelpers()
        keptParts = []
        attempt.limitRequests(to: nil)
    }

    // MARK: - The attempt reaching the parts

    /// Whether the attempt's next request begins where the helpers' parts do.
    mutating func position() -> Position {
        guard let helpers, !helpers.isClosed, let total = attempt.totalBytes else { return .own }
        let leadEnd = helpers.plan.leadEnd
        if attempt.offset > leadEnd {
            _ = closeHelpers()
            attempt.limitRequests(to: nil)
            return .lostTrack(leadEnd: leadEnd)
        }
        return attempt.offset == leadEnd && attempt.offset < total ? .atParts : .own
    }

    /// The attempt's offset reached the next part: what it does.
    mutating func reachedPart() -> PartStep {
        guard let step = helpers?.plan.leadArrived() else { return .finished }
        switch step {
        case .finished:
            return .finished
        case .wait:
            return .wait
        case .absorb(let range):
            // Only bytes that continue the attempt's own go into the digest, in order.
            guard range.start == attempt.offset else {
                _ = closeHelpers()
                attempt.limitRequests(to: nil)
                return .misplaced(range)
            }
            helpers?.absorb(range)
            attempt.limitRequests(to: helpers?.plan.leadEnd)
            return .absorb(range)
        }
    }

    /// The part's bytes up to `end` are in the digest: the attempt's offset moves past them (nil:
    /// reading them failed, and the attempt decides).
    mutating func absorbed(to end: Int64?) {
        if let end { attempt.skipped(to: end) }
        helpers?.absorb(nil)
    }
}
