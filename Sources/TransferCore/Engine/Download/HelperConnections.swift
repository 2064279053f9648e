/// The helper connections of one download over several (`segments` > 1), as a value: the plan
/// that shares the file out between them and the attempt (`SegmentPlan`), each helper's request,
/// and what to do when one answers, writes or ends. It performs no I/O and reads no clock: the
/// runner (`DownloadRunner+Helpers`) feeds it on the delegate queue and carries its decisions out.
struct HelperConnections: Sendable {
    /// Whether helpers may fetch.
    enum State: Equatable, Sendable {
        /// Helpers fetch, and new ones start while there is room and work.
        case fetching
        /// A helper's answer did not fit the file (no range, another version) or a helper could not
        /// write: the running helpers finish their parts, no new one starts.
        case refused
        /// The transfer ended, stopped or started over: bytes still arriving are dropped.
        case closed
    }

    struct Helper: Equatable, Sendable {
        /// Where its current request stands.
        enum Request: Equatable, Sendable {
            /// Sent; its answer not yet checked.
            case asked
            /// Its answer fits the file: its body is the file's.
            case accepted
            /// Cancelled (or held back before it was sent) to let the delegate queue's backlog
            /// drain: it continues its part once it has. `accepted`: the answer had fitted.
            case drainPaused(accepted: Bool)

            var isAccepted: Bool { self == .accepted || self == .drainPaused(accepted: true) }
            var isDrainPaused: Bool { if case .drainPaused = self { true } else { false } }
        }

        /// The start of the part it fetches (the part's key in the plan).
        var part: Int64
        /// Where the current request's next byte goes, and where the request ends (exclusive).
        var offset: Int64
        var end: Int64
        var request: Request = .asked
    }

    /// How a helper's answer is taken.
    enum Answer: Equatable, Sendable {
        /// An interim answer (1xx but 101): the final one follows.
        case interim
        /// Its body is the file's.
        case accept
        /// Cancel its request: this helper stops (a transient status, or it closed meanwhile).
        case cancel
        /// Cancel its request: the answer does not fit the file, and no new helper starts.
        case refuse
    }

    /// What a helper does next, when it asks for more of its part.
    enum Next: Equatable, Sendable {
        /// Send a request for these bytes.
        case send(ClosedRange<Int64>)
        /// Wait for the delegate queue's backlog to drain, then ask again.
        case waitForDrain
        /// Nothing left to fetch (or the helpers closed): it stopped, its part is left to others.
        case retired
    }

    /// What follows the end of a helper's request.
    enum End: Equatable, Sendable {
        /// Not a live helper's (the helpers closed, or it was retired): nothing.
        case none
        /// It stopped, its part left to the attempt or another helper (`replace`: a new helper
        /// starts after `helperReplacementDelay`, as it failed).
        case retired(replace: Bool)
        /// Held back for the backlog: it continues its part once that has drained.
        case resumeWhenDrained
        /// Its range is done and its part is not: it asks for the next range.
        case next
        /// Its part is done: it takes another, if any is worth splitting.
        case takeAnother
        /// Its part is done and no new work starts (`refused`).
        case done
    }

    var plan: SegmentPlan
    /// Helpers at most: the job's segments less the attempt's own connection.
    let width: Int
    private(set) var state: State = .fetching
    private(set) var helpers: [Int: Helper] = [:]
    /// Every helper request not yet ended, even after the helpers closed: a callback of one of
    /// these is never the attempt's.
    private(set) var workerByTask: [Int: Int] = [:]
    private(set) var nextWorker = 0
    private(set) var failures = 0
    /// A part the attempt is taking into the digest: still in the file past the attempt's offset.
    private(set) var absorbing: ByteRange?
    /// The ranges the last checkpoint recorded.
    private(set) var lastCheckpointParts: [ByteRange] = []

    init(plan: SegmentPlan, width: Int) {
        self.plan = plan
        self.width = width
    }

    var isClosed: Bool { state == .closed }

    /// The ranges past the attempt's offset in the file, for a checkpoint.
    var ranges: [ByteRange] {
        var ranges = plan.ranges
        if let absorbing, absorbing.count > 0 { ranges.insert(absorbing, at: 0) }
        return ranges
    }

    var bytesAhead: Int64 { plan.bytesAhead + (absorbing?.count ?? 0) }

    /// The attempt takes `range` into the digest (nil: it is done, or gave up).
    mutating func absorb(_ range: ByteRange?) {
        absorbing = range
    }

    /// A checkpoint recording `parts` began.
    mutating func checkpointed(_ parts: [ByteRange]) {
        lastCheckpointParts = parts
    }

    /// The helper whose request `task` is, if it is a helper's.
    func worker(ofTask task: Int) -> Int? { workerByTask[task] }

    // MARK: - Starting helpers

    /// The next helper to start, when there is room for one and new helpers may start.
    var roomForHelper: Int? {
        state == .fetching && helpers.count < width ? nextWorker : nil
    }

    /// Gives `worker` a part to fetch: one nobody fetches, or half of the largest range still to
    /// fetch (`leadFrom`: where the attempt's range is still unasked). Returns false when nothing
    /// is worth splitting; then `worker` is not taken.
    mutating func assign(_ worker: Int, leadFrom: Int64) -> Bool {
        guard let part = plan.assign(worker, leadFrom: leadFrom) else { return false }
        helpers[worker] = Helper(part: part, offset: part, end: part)
        if worker >= nextWorker { nextWorker = worker + 1 }
        return true
    }

    /// `worker` asks for the next range of its part, of at most `rangeBytes`; `backlogHigh`: chunks
    /// pile up on the delegate queue, which a new request would only add to.
    mutating func next(_ worker: Int, rangeBytes: Int64, backlogHigh: Bool) -> Next {
        guard state != .closed, let part = plan.part(of: worker), part.done < part.end else {
            retire(worker)
            return .retired
        }
        if backlogHigh {
            if let accepted = helpers[worker]?.request.isAccepted { helpers[worker]?.request = .drainPaused(accepted: accepted) }
            return .waitForDrain
        }
        let end = min(part.end, part.done + rangeBytes)
        plan.asked(part.start, upTo: end)
        helpers[worker] = Helper(part: part.start, offset: part.done, end: end)
        return .send(part.done...(end - 1))
    }

    /// The request of `worker` went out as `task`.
    mutating func sent(_ worker: Int, task: Int) {
        workerByTask[task] = worker
    }

    /// `worker` stops: its part, unfinished, is left for the attempt or another helper.
    mutating func retire(_ worker: Int) {
        plan.release(worker)
        helpers[worker] = nil
    }

    /// Whether `worker` waits for the backlog to drain and may continue.
    func waitsForDrain(_ worker: Int) -> Bool {
        state != .closed && helpers[worker] != nil
    }

    // MARK: - A helper's request

    /// The answer to `worker`'s request, judged by the attempt's rules (`helperAnswerFits`).
    mutating func answer(_ worker: Int, _ response: DownloadAttempt.Response?, attempt: DownloadAttempt) -> Answer {
        guard state != .closed, let helper = helpers[worker], let response else { return .cancel }
        if (100...199).contains(response.status), response.status != 101 { return .interim }
        guard helper.end > helper.offset, attempt.helperAnswerFits(response, asked: helper.offset...(helper.end - 1), total: plan.total)
        else {
            // A transient status (503…) ends this helper only; any other answer ends them all.
            if HTTPStatusClass.isTransient(response.status) { return .cancel }
            state = .refused
            return .refuse
        }
        helpers[worker]?.request = .accepted
        return .accept
    }

    /// Where `count` bytes of `worker`'s body go in the file, and how many of them: nil when they
    /// are not the file's (not accepted, or the helpers closed).
    func placement(_ worker: Int, count: Int) -> (at: Int64, count: Int64)? {
        guard state != .closed, let helper = helpers[worker], helper.request.isAccepted else { return nil }
        let bytes = min(Int64(count), helper.end - helper.offset)
        return bytes > 0 ? (helper.offset, bytes) : nil
    }

    /// `worker` wrote `count` bytes at its offset. Returns whether its request is to be cancelled
    /// to let the backlog drain (`backlogHigh`; once per request).
    mutating func wrote(_ worker: Int, _ count: Int64, backlogHigh: Bool) -> Bool {
        guard var helper = helpers[worker] else { return false }
        helper.offset += count
        var cancel = false
        if backlogHigh, !helper.request.isDrainPaused {
            helper.request = .drainPaused(accepted: helper.request.isAccepted)
            cancel = true
        }
        helpers[worker] = helper
        plan.wrote(helper.part, count)
        return cancel
    }

    /// A helper could not write: no new helper starts (the attempt meets the same disk and decides).
    mutating func writeFailed() {
        if state == .fetching { state = .refused }
    }

    /// The request `task` of `worker` ended (`failed`: with an error); `underWay`: the transfer goes on.
    mutating func ended(_ worker: Int, task: Int, failed: Bool, underWay: Bool) -> End {
        workerByTask[task] = nil
        guard state != .closed, let helper = helpers[worker] else { return .none }
        guard underWay else {
            retire(worker)
            return .retired(replace: false)
        }
        if helper.request.isDrainPaused, helper.offset < helper.end { return .resumeWhenDrained }
        // (A helper stopped for the backlog just as its range was complete ended well.)
        guard !failed || helper.request.isDrainPaused, helper.request.isAccepted, helper.offset == helper.end else {
            retire(worker)
            failures += 1
            // A helper that failed is replaced a little later, a few times over.
            return .retired(replace: state == .fetching && failures <= 2 * width)
        }
        if plan.part(of: worker) != nil { return .next }
        helpers[worker] = nil
        return state == .fetching ? .takeAnother : .done
    }

    /// Stops the helpers: their requests are to be cancelled and bytes still arriving dropped.
    /// Returns the ranges past the attempt's offset that are in the file, or nil when they were closed already.
    mutating func close() -> [ByteRange]? {
        guard state != .closed else { return nil }
        state = .closed
        helpers = [:]
        return ranges
    }
}
