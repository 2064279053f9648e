import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

/// The helper connections of a download over several (`SegmentFetch`): starting them, their
/// requests and callbacks, and back-pressure. What the attempt does when it reaches their parts is
/// in `DownloadRunner+Segments`.
extension DownloadRunner {
    /// No part smaller than this is split off for a helper.
    static let minimumSegmentSplit: Int64 = 1 << 20
    /// How long after a helper failed another takes its place: a server that refused a connection
    /// a moment ago is not asked again at once.
    static let helperReplacementDelay: DispatchTimeInterval = .seconds(1)

    // MARK: - Starting the helpers (delegate queue)

    /// After the attempt accepted an answer: starts the helpers when the job asked for several
    /// connections and the answer allows them (a 206 of a known size with a validator, and enough
    /// of the file left), unless a rate limit paces the job.
    func startHelpersIfAllowed(_ context: DownloadContext) {
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
    func fillHelpers(_ context: DownloadContext) {
        guard let fetch = context.segments, !fetch.closed, !fetch.refused else { return }
        let phase = context.phase
        guard phase.isUnderWay else { return }
        while fetch.helpers.count < fetch.width, takeWork(fetch.nextWorker, context) {
            fetch.nextWorker += 1
        }
    }

    /// Gives `worker` a part to fetch (one nobody fetches, or half of the largest range left) and
    /// sends its first request; false when nothing is worth splitting.
    private func takeWork(_ worker: Int, _ context: DownloadContext) -> Bool {
        guard let fetch = context.segments, let part = fetch.plan.assign(worker, leadFrom: leadFrom(context)) else { return false }
        fetch.helpers[worker] = SegmentFetch.Helper(part: part, offset: part, end: part)
        // The attempt's requests stop where the parts begin.
        context.attempt.rangeLimit = fetch.plan.leadEnd
        sendHelper(worker, context)
        return true
    }

    /// Where the attempt's range is still unasked: past its offset, past its request out, and
    /// past a part it is taking into the digest (its offset jumps there once it has).
    func leadFrom(_ context: DownloadContext) -> Int64 {
        max(context.attempt.offset, context.leadAsked, context.segments?.absorbing?.end ?? 0)
    }

    /// Sends a helper's next request: the next bounded range of its part.
    func sendHelper(_ worker: Int, _ context: DownloadContext) {
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
            guard control.phase.isUnderWay else { return false }
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
    func retireHelper(_ worker: Int, _ context: DownloadContext) {
        guard let fetch = context.segments else { return }
        fetch.plan.release(worker)
        fetch.helpers[worker] = nil
        wakeLeadIfPartReady(context)
    }

    // MARK: - A helper's callbacks (delegate queue)

    /// The helper's answer: only a 206 with exactly the range asked for, of the same size and
    /// version as the attempt's, brings bytes of the file.
    func helperResponded(_ worker: Int, _ response: URLResponse, _ context: DownloadContext) -> URLSession.ResponseDisposition {
        guard let fetch = context.segments, !fetch.closed, var helper = fetch.helpers[worker],
            let answer = RequestBuilder.response(response, file: context.sink.file, withFreeSpace: false)
        else { return .cancel }
        if (100...199).contains(answer.status), answer.status != 101 { return .allow }
        let range = ContentRange(answer.contentRange)
        let fits =
            answer.status == 206 && range?.start == helper.offset && range?.end == helper.end - 1 && range?.total == fetch.plan.total
            && answer.validator != nil && answer.validator == context.attempt.validator
            && ContentCoding.named(answer.contentEncoding) == context.attempt.contentEncoding
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
    func helperReceived(_ worker: Int, _ data: Data, task: URLSessionDataTask, _ context: DownloadContext) {
        guard let fetch = context.segments, !fetch.closed, var helper = fetch.helpers[worker], helper.accepted else { return }
        let phase = context.phase
        guard phase.isUnderWay else { return }
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
        wakeLeadIfPartReady(context)
        checkpointIfDue(context, now: MonotonicClock.nanoseconds())
    }

    /// Sends a helper's next request once the delegate queue's backlog is down to the low-water mark.
    func resumeHelperWhenDrained(_ worker: Int, _ context: DownloadContext) {
        queues.assertOnDelegate()
        guard let fetch = context.segments, !fetch.closed, fetch.helpers[worker] != nil else { return }
        let phase = context.phase
        guard phase.isUnderWay else {
            retireHelper(worker, context)
            return
        }
        let retry: @Sendable () -> Void = { self.resumeHelperWhenDrained(worker, context) }
        guard backlogDrained(orRetry: retry) else { return }
        // `sendHelper` counts the digest's backlog too: while that keeps the sum over its mark,
        // hashing is what brings it down (going on now would only come straight back here).
        let room = configuration.backlogHighWater / 2 - queues.delegateBacklog
        if context.sink.digestBacklog > room {
            context.sink.digest.whenPending(below: max(room + 1, 1)) { self.queues.onDelegate(retry) }
            return
        }
        sendHelper(worker, context)
    }

    /// A helper's request ended: it goes on with its part, takes another, or stops.
    func helperCompleted(_ worker: Int, task: URLSessionTask, error: (any Error)?, _ context: DownloadContext) {
        guard let fetch = context.segments else { return }
        fetch.workerByTask[task.taskIdentifier] = nil
        context.control.withLock { _ = $0.helperTasks.removeValue(forKey: task.taskIdentifier) }
        guard !fetch.closed, let helper = fetch.helpers[worker] else { return }
        let phase = context.phase
        guard phase.isUnderWay else {
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
            // A helper that failed is replaced a little later (a time named once, not a condition
            // looked at again), a few times over.
            if !fetch.refused, fetch.failures <= 2 * fetch.width {
                queues.io.asyncAfter(deadline: .now() + Self.helperReplacementDelay) {
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
        if !fetch.refused { _ = takeWork(worker, context) }
    }
}
