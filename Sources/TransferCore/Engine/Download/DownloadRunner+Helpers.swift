import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

/// The helper connections of a download over several (`HelperConnections`): starting them, their
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
        let paced = rates.rate(for: context.request.jobID) != nil
        guard context.machine.startHelpers(paced: paced, minimumSplit: Self.minimumSegmentSplit) else { return }
        let kept = context.machine.helpers?.bytesAhead ?? 0
        fillHelpers(context)
        context.request.logger.debug(
            "fetching over several connections", metadata: ["helpers": "\(context.machine.helpers?.helpers.count ?? 0)", "kept": "\(kept)"])
    }

    /// Starts helpers until there are as many as the job may use or nothing is left to split.
    func fillHelpers(_ context: DownloadContext) {
        guard context.machine.state.isUnderWay else { return }
        while let worker = context.machine.helpers?.roomForHelper, takeWork(worker, context) {}
    }

    /// Gives `worker` a part to fetch (one nobody fetches, or half of the largest range left) and
    /// sends its first request; false when nothing is worth splitting, or when the request could
    /// not go out (the transfer stopped meanwhile, the session is gone): the helper is retired
    /// then, and another would meet the same end.
    private func takeWork(_ worker: Int, _ context: DownloadContext) -> Bool {
        guard context.machine.assignHelper(worker) else { return false }
        sendHelper(worker, context)
        return context.machine.helpers?.helpers[worker] != nil
    }

    /// Sends a helper's next request: the next bounded range of its part.
    func sendHelper(_ worker: Int, _ context: DownloadContext) {
        guard let session, !sessionInvalidated.load(ordering: .acquiring), context.machine.state.isUnderWay else {
            retireHelper(worker, context)
            return
        }
        // Not while chunks pile up: FoundationNetworking delivers a request's bytes however slowly
        // they are taken, and a cancel reaches libcurl too late to hold much back.
        let backlogHigh = queues.delegateBacklog + context.sink.digestBacklog > configuration.backlogHighWater / 2
        // The smallest segment: what a request may still deliver after its helper was stopped is
        // what bounds memory, once for each helper.
        let next = context.machine.helpers?.next(worker, rangeBytes: configuration.segmentBytes.lowerBound, backlogHigh: backlogHigh) ?? .retired
        let range: ClosedRange<Int64>
        switch next {
        case .retired:
            wakeLeadIfPartReady(context)
            return
        case .waitForDrain:
            resumeHelperWhenDrained(worker, context)
            return
        case .send(let asked):
            range = asked
        }
        let attempt = context.machine.attempt
        let plan = DownloadAttempt.RequestPlan(
            url: attempt.finalURL ?? context.request.url, range: range, ifRange: attempt.validator,
            withholdCredentials: attempt.credentialsWithheld)
        let task = session.dataTask(with: RequestBuilder.request(plan, for: context.request))
        task.taskDescription = context.request.jobID
        let id = task.taskIdentifier
        context.machine.helpers?.sent(worker, task: id)
        registry.register(task: id, for: context)
        // A cancel or a stop reaches the transfer on this queue too: after this, and it cancels the task.
        context.helperTasks[id] = task
        task.resume()
    }

    /// A helper stops: its part, unfinished, is left for the attempt or another helper.
    func retireHelper(_ worker: Int, _ context: DownloadContext) {
        context.machine.helpers?.retire(worker)
        wakeLeadIfPartReady(context)
    }

    // MARK: - A helper's callbacks (delegate queue)

    /// The helper's answer, judged by the attempt's rules (`HelperConnections.answer`).
    func helperResponded(_ worker: Int, _ response: URLResponse, _ context: DownloadContext) -> URLSession.ResponseDisposition {
        let answer = RequestBuilder.response(response, file: context.sink.file, withFreeSpace: false)
        switch context.machine.helperAnswered(worker, answer) {
        case .interim, .accept:
            return .allow
        case .cancel:
            return .cancel
        case .refuse:
            context.request.logger.info(
                "a helper connection's answer does not fit the file: the rest is fetched over one connection",
                metadata: ["status": "\(answer?.status ?? 0)", "content_range": "\(answer?.contentRange ?? "none")"])
            return .cancel
        }
    }

    /// A helper's body bytes: written at their place in the file.
    func helperReceived(_ worker: Int, _ data: Data, task: URLSessionDataTask, _ context: DownloadContext) {
        guard let placed = context.machine.helpers?.placement(worker, count: data.count) else { return }
        let (at, count) = (placed.at, placed.count)
        guard context.machine.state.isUnderWay else { return }
        let file = context.sink.file
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
            context.machine.helpers?.writeFailed()
            task.cancel()
            return
        }
        if configuration.writeDelayMicroseconds > 0 { Self.simulateSlowDisk(configuration.writeDelayMicroseconds, count: Int(count)) }
        // Chunks pile up on the delegate queue when the disk (or the CPU) is slower than the
        // network: as the attempt's own request does, a helper's stops then, keeping its bytes,
        // and continues once the backlog has drained, so memory stays bounded.
        // Helpers stop at half the attempt's mark: several connections fill the queue faster than
        // one, in the time a cancel takes to reach libcurl.
        let backlogHigh = queues.delegateBacklog + context.sink.digestBacklog > configuration.backlogHighWater / 2
        if context.machine.helpers?.wrote(worker, count, backlogHigh: backlogHigh) == true { task.cancel() }
        wakeLeadIfPartReady(context)
        checkpointIfDue(context, now: MonotonicClock.nanoseconds())
    }

    /// Sends a helper's next request once the delegate queue's backlog is down to the low-water mark.
    func resumeHelperWhenDrained(_ worker: Int, _ context: DownloadContext) {
        queues.assertOnDelegate()
        guard context.machine.helpers?.waitsForDrain(worker) == true else { return }
        guard context.machine.state.isUnderWay else {
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

    /// A helper's request ended: it goes on with its part, takes another, or stops
    /// (`HelperConnections.ended` decides).
    func helperCompleted(_ worker: Int, task: URLSessionTask, error: (any Error)?, _ context: DownloadContext) {
        context.helperTasks.removeValue(forKey: task.taskIdentifier)
        let underWay = context.machine.state.isUnderWay
        let end = context.machine.helpers?.ended(worker, task: task.taskIdentifier, failed: error != nil, underWay: underWay) ?? .none
        switch end {
        case .none, .done:
            return
        case .resumeWhenDrained:
            resumeHelperWhenDrained(worker, context)
        case .next:
            sendHelper(worker, context)
        case .takeAnother:
            _ = takeWork(worker, context)
        case .retired(let replace):
            wakeLeadIfPartReady(context)
            guard underWay, let fetch = context.machine.helpers else { return }
            context.request.logger.debug(
                "a helper connection failed",
                metadata: ["error": "\(error.map { "\($0)" } ?? "none")", "failures": "\(fetch.failures)"])
            // A helper that failed is replaced a little later (a time named once, not a condition
            // looked at again).
            if replace {
                queues.io.asyncAfter(deadline: .now() + Self.helperReplacementDelay) {
                    self.queues.onDelegate { self.fillHelpers(context) }
                }
            }
        }
    }
}
