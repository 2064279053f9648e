import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

/// The helper connections of one download over several (`segments` > 1): their requests, and
/// the plan that shares the file out between them and the attempt (`SegmentPlan`).
///
/// `@unchecked Sendable`: used only on the engine's delegate queue; other threads cancel the
/// helpers' requests through the context's `control`.
final class SegmentFetch: @unchecked Sendable {
    struct Helper {
        /// The start of the part it fetches (the part's key in the plan).
        var part: Int64
        /// Where the current request's next byte goes, and where the request ends (exclusive).
        var offset: Int64
        var end: Int64
        /// Whether the current request's answer was checked and its body is the file's.
        var accepted = false
        /// Whether its request was cancelled to let the delegate queue's backlog drain: it
        /// continues its part once it has.
        var drainPaused = false
    }

    var plan: SegmentPlan
    /// Helpers at most: the job's segments less the attempt's own connection.
    let width: Int
    var helpers: [Int: Helper] = [:]
    /// Every helper request not yet ended, even after the helpers closed: a callback of one of
    /// these is never the attempt's.
    var workerByTask: [Int: Int] = [:]
    var nextWorker = 0
    var failures = 0
    /// Set when the transfer ends, stops or starts over: helpers' bytes arriving later are dropped.
    var closed = false
    /// Set when a helper's answer did not fit the file (no range, another version): no new helpers.
    var refused = false
    /// A part the attempt is taking into the digest: still in the file past the attempt's offset.
    var absorbing: ByteRange?
    /// The ranges the last checkpoint recorded.
    var lastCheckpointParts: [ByteRange] = []

    init(plan: SegmentPlan, width: Int) {
        self.plan = plan
        self.width = width
    }

    /// The ranges past the attempt's offset in the file, for a checkpoint.
    var ranges: [ByteRange] {
        var ranges = plan.ranges
        if let absorbing, absorbing.count > 0 { ranges.insert(absorbing, at: 0) }
        return ranges
    }

    var bytesAhead: Int64 { plan.bytesAhead + (absorbing?.count ?? 0) }
}

extension TransferRunner {
    /// No part smaller than this is split off for a helper.
    static let minimumSegmentSplit: Int64 = 1 << 20

    // MARK: - Starting the helpers (delegate queue)

    /// After the attempt accepted an answer: starts the helpers when the job asked for several
    /// connections and the answer allows them (a 206 of a known size with a validator, and enough
    /// of the file left), unless a rate limit paces the job.
    func startHelpersIfAllowed(_ context: TransferContext) {
        let attempt = context.attempt
        guard context.segments == nil, context.request.segments > 1, attempt.status == 206, attempt.rangesUsable,
            attempt.validator != nil, let total = attempt.totalBytes, rates.rate(for: context.request.jobID) == nil
        else { return }
        let plan = SegmentPlan(
            total: total, prefix: attempt.offset, kept: context.keptParts, minimumSplit: Self.minimumSegmentSplit)
        guard plan.leadEnd == context.attempt.rangeLimit ?? total else {
            // The kept ranges do not match where the attempt's requests stop: fetch without them.
            context.keptParts = []
            context.attempt.rangeLimit = nil
            return
        }
        let fetch = SegmentFetch(plan: plan, width: context.request.segments - 1)
        context.segments = fetch
        context.keptParts = []
        fillHelpers(context)
        context.request.logger.debug(
            "fetching over several connections", metadata: ["helpers": "\(fetch.helpers.count)", "kept": "\(plan.bytesAhead)"])
    }

    /// Starts helpers until there are as many as the job may use or nothing is left to split.
    func fillHelpers(_ context: TransferContext) {
        guard let fetch = context.segments, !fetch.closed, !fetch.refused else { return }
        let phase = context.phase
        guard phase == .active || phase == .pausing else { return }
        while fetch.helpers.count < fetch.width {
            let worker = fetch.nextWorker
            guard let part = fetch.plan.assign(worker, leadFrom: leadFrom(context)) else { break }
            fetch.nextWorker += 1
            fetch.helpers[worker] = SegmentFetch.Helper(part: part, offset: part, end: part)
            // The attempt's requests stop where the parts begin.
            context.attempt.rangeLimit = fetch.plan.leadEnd
            sendHelper(worker, context)
        }
    }

    /// Where the attempt's range is still unasked: past its offset, past its request out, and
    /// past a part it is taking into the digest (its offset jumps there once it has).
    func leadFrom(_ context: TransferContext) -> Int64 {
        max(context.attempt.offset, context.leadAsked, context.segments?.absorbing?.end ?? 0)
    }

    /// Sends a helper's next request: the next bounded range of its part.
    func sendHelper(_ worker: Int, _ context: TransferContext) {
        guard let fetch = context.segments, !fetch.closed, let part = fetch.plan.part(of: worker), part.done < part.end,
            let session, !sessionInvalidated.load(ordering: .acquiring)
        else {
            retireHelper(worker, context)
            return
        }
        // Not while chunks pile up: FoundationNetworking delivers a request's bytes however slowly
        // they are taken, and a cancel reaches libcurl too late to hold much back.
        if queues.delegateBacklog + context.sink.digestBacklog > configuration.backlogHighWater / 2 {
            fetch.helpers[worker]?.drainPaused = true
            resumeHelperWhenDrained(worker, context)
            return
        }
        let from = part.done
        // The smallest segment: what a request may still deliver after its helper was stopped is
        // what bounds memory, once for each helper.
        let end = min(part.end, from + configuration.segmentBytes.lowerBound)
        fetch.plan.asked(part.start, upTo: end)
        let attempt = context.attempt
        let plan = DownloadAttempt.RequestPlan(
            url: attempt.finalURL ?? context.request.url, range: from...(end - 1), ifRange: attempt.validator,
            withholdCredentials: attempt.credentialsWithheld)
        let task = session.dataTask(with: RequestBuilder.request(plan, for: context.request))
        task.taskDescription = context.request.jobID
        let id = task.taskIdentifier
        fetch.helpers[worker] = SegmentFetch.Helper(part: part.start, offset: from, end: end)
        fetch.workerByTask[id] = worker
        registry.register(task: id, for: context)
        let sent: Bool = context.control.withLock { control in
            guard control.phase == .active || control.phase == .pausing else { return false }
            control.helperTasks[id] = task
            task.resume()
            return true
        }
        if !sent {
            _ = registry.unregister(task: id)
            fetch.workerByTask[id] = nil
            retireHelper(worker, context)
        }
    }

    /// A helper stops: its part, unfinished, is left for the attempt or another helper.
    func retireHelper(_ worker: Int, _ context: TransferContext) {
        guard let fetch = context.segments else { return }
        fetch.plan.release(worker)
        fetch.helpers[worker] = nil
    }

    // MARK: - A helper's callbacks (delegate queue)

    /// The helper's answer: only a 206 with exactly the range asked for, of the same size and
    /// version as the attempt's, brings bytes of the file.
    func helperResponded(_ worker: Int, _ response: URLResponse, _ context: TransferContext) -> URLSession.ResponseDisposition {
        guard let fetch = context.segments, !fetch.closed, var helper = fetch.helpers[worker],
            let answer = RequestBuilder.response(response, file: context.sink.file, withFreeSpace: false)
        else { return .cancel }
        if (100...199).contains(answer.status), answer.status != 101 { return .allow }
        let range = ContentRange(answer.contentRange)
        let encoding = answer.contentEncoding?.lowercased()
        let fits =
            answer.status == 206 && range?.start == helper.offset && range?.end == helper.end - 1 && range?.total == fetch.plan.total
            && answer.validator != nil && answer.validator == context.attempt.validator && (encoding == nil || encoding == "identity")
            && answer.contentLength.map { ContentLength.conflict($0) == nil } != false
        guard fits else {
            // A transient status (503…) ends this helper only; any other answer ends them all.
            if !HTTPStatusClass.isTransient(answer.status) {
                fetch.refused = true
                context.request.logger.info(
                    "a helper connection's answer does not fit the file: the rest is fetched over one connection",
                    metadata: ["status": "\(answer.status)", "content_range": "\(answer.contentRange ?? "none")"])
            }
            return .cancel
        }
        helper.accepted = true
        fetch.helpers[worker] = helper
        return .allow
    }

    /// A helper's body bytes: written at their place in the file.
    func helperReceived(_ worker: Int, _ data: Data, task: URLSessionDataTask, _ context: TransferContext) {
        guard let fetch = context.segments, !fetch.closed, var helper = fetch.helpers[worker], helper.accepted else { return }
        let phase = context.phase
        guard phase == .active || phase == .pausing else { return }
        let count = min(Int64(data.count), helper.end - helper.offset)
        guard count > 0 else { return }
        let file = context.sink.file
        let at = helper.offset
        let failure: FileIOError? = data.withUnsafeBytes { raw in
            do throws(FileIOError) {
                try FileIO.writeAll(file.fd, UnsafeRawBufferPointer(rebasing: raw[..<Int(count)]), at: at, path: file.path)
                return nil
            } catch {
                return error
            }
        }
        if let error = failure {
            // The attempt meets the same disk soon enough and decides; this helper stops.
            context.request.logger.warning("a helper connection cannot write", metadata: ["error": "\(error)"])
            fetch.refused = true
            task.cancel()
            return
        }
        helper.offset += count
        if configuration.writeDelayMicroseconds > 0 { usleep(configuration.writeDelayMicroseconds) }
        // Chunks pile up on the delegate queue when the disk (or the CPU) is slower than the
        // network: as the attempt's own request does, a helper's stops then, keeping its bytes,
        // and continues once the backlog has drained, so memory stays bounded.
        // Helpers stop at half the attempt's mark: several connections fill the queue faster than
        // one, in the time a cancel takes to reach libcurl.
        if !helper.drainPaused, queues.delegateBacklog + context.sink.digestBacklog > configuration.backlogHighWater / 2 {
            helper.drainPaused = true
            task.cancel()
        }
        fetch.helpers[worker] = helper
        fetch.plan.wrote(helper.part, count)
        checkpointIfDue(context, now: MonotonicClock.nanoseconds())
    }

    /// Sends a helper's next request once the delegate queue's backlog is down to the low-water mark.
    func resumeHelperWhenDrained(_ worker: Int, _ context: TransferContext) {
        queues.assertOnDelegate()
        guard let fetch = context.segments, !fetch.closed, fetch.helpers[worker] != nil else { return }
        let phase = context.phase
        guard phase == .active || phase == .pausing else {
            retireHelper(worker, context)
            return
        }
        guard queues.delegateBacklog <= configuration.backlogLowWater else {
            queues.io.asyncAfter(deadline: .now() + .milliseconds(2)) {
                self.queues.onDelegate { self.resumeHelperWhenDrained(worker, context) }
            }
            return
        }
        sendHelper(worker, context)
    }

    /// A helper's request ended: it goes on with its part, takes another, or stops.
    func helperCompleted(_ worker: Int, task: URLSessionTask, error: (any Error)?, _ context: TransferContext) {
        guard let fetch = context.segments else { return }
        fetch.workerByTask[task.taskIdentifier] = nil
        context.control.withLock { _ = $0.helperTasks.removeValue(forKey: task.taskIdentifier) }
        guard !fetch.closed, let helper = fetch.helpers[worker] else { return }
        let phase = context.phase
        guard phase == .active || phase == .pausing else {
            retireHelper(worker, context)
            return
        }
        if helper.drainPaused, helper.offset < helper.end {
            resumeHelperWhenDrained(worker, context)
            return
        }
        // (A helper stopped for the backlog just as its range was complete ended well.)
        guard error == nil || helper.drainPaused, helper.accepted, helper.offset == helper.end else {
            retireHelper(worker, context)
            fetch.failures += 1
            context.request.logger.debug(
                "a helper connection failed",
                metadata: ["error": "\(error.map { "\($0)" } ?? "none")", "offset": "\(helper.offset)", "end": "\(helper.end)", "failures": "\(fetch.failures)"])
            // A helper that failed is replaced a little later, a few times over.
            if !fetch.refused, fetch.failures <= 2 * fetch.width {
                queues.io.asyncAfter(deadline: .now() + .seconds(1)) {
                    self.queues.onDelegate { self.fillHelpers(context) }
                }
            }
            return
        }
        if fetch.plan.part(of: worker) != nil {
            sendHelper(worker, context)
            return
        }
        // Its part is done: it takes another, or stops when nothing is worth splitting.
        fetch.helpers[worker] = nil
        if !fetch.refused, let part = fetch.plan.assign(worker, leadFrom: leadFrom(context)) {
            fetch.helpers[worker] = SegmentFetch.Helper(part: part, offset: part, end: part)
            context.attempt.rangeLimit = fetch.plan.leadEnd
            sendHelper(worker, context)
        }
    }

    // MARK: - The attempt reaching a part (delegate queue)

    /// Whether the attempt's next segment begins where the helpers' parts do.
    func reachedHelpers(_ context: TransferContext) -> Bool {
        guard let fetch = context.segments, !fetch.closed, let total = context.attempt.totalBytes else { return false }
        if context.attempt.offset > fetch.plan.leadEnd {
            // The attempt went past where the helpers' parts begin, which the plan never allows:
            // rather than fetch their ranges twice, it fetches the rest alone.
            context.request.logger.warning(
                "the download over several connections lost track of its parts; it continues over one",
                metadata: ["offset": "\(context.attempt.offset)", "lead_end": "\(fetch.plan.leadEnd)"])
            closeHelpers(context)
            context.attempt.rangeLimit = nil
            return false
        }
        return context.attempt.offset == fetch.plan.leadEnd && context.attempt.offset < total
    }

    /// The attempt reached the next part: takes its bytes into the digest and goes on after them,
    /// or waits for its helper.
    func continueAtPart(_ context: TransferContext) {
        queues.assertOnDelegate()
        guard let fetch = context.segments else { return }
        let phase = context.phase
        guard phase == .active || phase == .pausing else {
            completeStop(context)
            return
        }
        if context.attempt.hasFailed {
            perform(context.attempt.proceed(), context)
            return
        }
        switch fetch.plan.leadArrived() {
        case .finished:
            perform(context.attempt.proceed(), context)
        case .wait:
            queues.io.asyncAfter(deadline: .now() + .milliseconds(10)) {
                self.queues.onDelegate { self.continueAtPart(context) }
            }
        case .absorb(let range):
            // Only bytes that continue the attempt's own go into the digest, in order.
            guard range.start == context.attempt.offset else {
                context.request.logger.warning(
                    "a part does not begin where the download stands; it continues over one connection",
                    metadata: ["offset": "\(context.attempt.offset)", "part": "\(range.start)"])
                closeHelpers(context)
                context.attempt.rangeLimit = nil
                perform(context.attempt.proceed(), context)
                return
            }
            fetch.absorbing = range
            context.attempt.rangeLimit = fetch.plan.leadEnd
            absorb(context, range, from: range.start)
        }
    }

    /// Hands the part's bytes at `from..<range.end` to the digest a few blocks per turn of the
    /// delegate queue, and no faster than it hashes; then moves the attempt past them.
    func absorb(_ context: TransferContext, _ range: ByteRange, from start: Int64) {
        guard let fetch = context.segments else { return }
        let phase = context.phase
        guard phase == .active || phase == .pausing else {
            completeStop(context)
            return
        }
        var position = start
        var blocks = 0
        do throws(FileIOError) {
            while position < range.end, blocks < 8, context.sink.digestBacklog < configuration.backlogHighWater {
                position += try context.sink.absorb(from: position, upTo: range.end)
                blocks += 1
            }
            if position == range.end { try context.sink.file.position(at: range.end) }
        } catch {
            fetch.absorbing = nil
            perform(context.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
            perform(context.attempt.proceed(), context)
            return
        }
        guard position == range.end else {
            let wait = blocks == 0 ? 2 : 0
            let next = position
            queues.io.asyncAfter(deadline: .now() + .milliseconds(wait)) {
                self.queues.onDelegate { self.absorb(context, range, from: next) }
            }
            return
        }
        context.attempt.skipped(to: range.end)
        fetch.absorbing = nil
        fillHelpers(context)
        if reachedHelpers(context) {
            continueAtPart(context)
        } else {
            perform(context.attempt.proceed(), context)
        }
    }

    // MARK: - Checkpoints and endings

    /// Checkpoints the partial file when due: the attempt's offset, and the helpers' ranges past it.
    func checkpointIfDue(_ context: TransferContext, now: UInt64) {
        let offset = context.attempt.offset
        // Once the helpers are closed (the file started over, say), their ranges are not recorded.
        let fetch = context.segments.flatMap { $0.closed ? nil : $0 }
        let progress = offset + (fetch?.bytesAhead ?? 0)
        guard
            context.sink.advanced(
                to: progress, now: now, checkpointBytes: configuration.checkpointBytes, intervalNanoseconds: checkpointIntervalNanoseconds)
        else { return }
        let jobID = context.request.jobID
        let parts = fetch?.ranges ?? []
        do throws(FileIOError) {
            let started = try context.sink.checkpoint(
                offset: offset, progress: progress, now: now, on: queues.io, logger: context.request.logger
            ) { bytes, generation in
                self.events.yield(.checkpoint(jobID: jobID, bytes: bytes, parts: parts, generation: generation))
            }
            if started { fetch?.lastCheckpointParts = parts }
        } catch {
            perform(context.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
        }
    }

    /// Stops the helpers: their requests are cancelled and bytes still arriving are dropped.
    /// Returns the ranges past the attempt's offset that are in the file.
    @discardableResult
    func closeHelpers(_ context: TransferContext) -> [ByteRange] {
        guard let fetch = context.segments, !fetch.closed else { return context.keptParts }
        fetch.closed = true
        let ranges = fetch.ranges
        fetch.helpers = [:]
        context.control.withLock { control in
            for task in control.helperTasks.values { task.cancel() }
        }
        return ranges
    }
}
