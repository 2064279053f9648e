import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

extension DownloadRunner {
    // MARK: - URLSession's callbacks (delegate queue), forwarded by SessionDelegate

    func received(_ response: URLResponse, task: URLSessionDataTask, _ context: DownloadContext) -> URLSession.ResponseDisposition {
        queues.assertOnDelegate()
        // An answer that comes after a cancel or a stop changes nothing: its request's end ends the transfer.
        guard context.machine.state.isUnderWay else { return .cancel }
        if let worker = context.machine.helpers?.worker(ofTask: task.taskIdentifier) { return helperResponded(worker, response, context) }
        if context.request.conditional {
            if (response as? HTTPURLResponse)?.statusCode == 304, !context.request.conditionalHeaders.isEmpty {
                return finishUnchanged(context)
            }
            context.stamp = ConditionalGet.Stamp(response)
        }
        let answer = RequestBuilder.response(response, file: context.sink.file, withFreeSpace: context.machine.attempt.needsFreeSpace)
        let disposition = perform(context.machine.attempt.respond(answer), context, answering: true)
        if disposition == .allow, context.request.segments > 1 { startHelpersIfAllowed(context) }
        return disposition
    }

    /// A `304` to a conditional request: the destination stays as it is and the partial file goes.
    private func finishUnchanged(_ context: DownloadContext) -> URLSession.ResponseDisposition {
        // Its request's end, which follows, finds the transfer ended.
        guard endsOwn(context, claim: .landing) else { return .cancel }
        closeHelpers(context)
        context.sink.file.unlink()
        events.yield(.unchanged(jobID: context.request.jobID))
        registry.remove(context.request.jobID)
        return .cancel
    }

    /// The test knob of a slow disk: `microseconds` for every 16 KiB written.
    static func simulateSlowDisk(_ microseconds: UInt32, count: Int) {
        usleep(microseconds &* UInt32(clamping: (count + (1 << 14) - 1) >> 14))
    }

    /// The per-chunk path: a write, a digest update, and now and then a checkpoint or a pause.
    func received(_ data: Data, task: URLSessionDataTask, _ context: DownloadContext) {
        if let worker = context.machine.helpers?.worker(ofTask: task.taskIdentifier) {
            helperReceived(worker, data, task: task, context)
            return
        }
        // A stopping transfer keeps what is on its way: it is synced and kept.
        let state = context.machine.state
        guard state.keepsBytes, context.machine.attempt.acceptsBody else { return }
        let offset = context.machine.attempt.offset + Int64(data.count)
        do throws(FileIOError) {
            try context.sink.write(data)
            context.machine.attempt.wrote(data.count)
            if configuration.writeDelayMicroseconds > 0 { Self.simulateSlowDisk(configuration.writeDelayMicroseconds, count: data.count) }
            checkpointIfDue(context, now: MonotonicClock.nanoseconds())
        } catch {
            perform(context.machine.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
            task.cancel()
            return
        }
        let backlog = context.sink.sampleBacklog(delegateBacklog: { queues.delegateBacklog })
        // Pausing continues with a ranged request, which only a 206 with a validator makes safe.
        if state == .fetching, context.machine.attempt.continuesWithRange, backlog > configuration.backlogHighWater {
            feed(.backlogHigh, context)
            context.request.logger.debug(
                "holding a transfer back while the disk catches up", metadata: ["offset": "\(offset)", "backlog": "\(queues.delegateBacklog)"])
        }
    }

    /// FoundationNetworking is told never to follow a redirect itself: its completion handler must
    /// be called before anything cancels the task, or it traps, so it cannot wait for a host check
    /// that may resolve a name. The attempt judges the redirect; once the 3xx answer is done, the
    /// target is checked against the host rules and asked with a new request.
    func redirected(_ response: HTTPURLResponse, to request: URLRequest, task: URLSessionTask, _ context: DownloadContext) {
        queues.assertOnDelegate()
        guard let target = request.url else { return }
        // A helper's redirect is judged by its answer: a 3xx is not the range it asked for.
        if context.machine.helpers?.worker(ofTask: task.taskIdentifier) != nil { return }
        context.machine.attempt.redirected(
            DownloadAttempt.Redirect(
                from: response.url ?? context.request.url, target: target, location: response.value(forHTTPHeaderField: "Location")))
    }

    /// `context` is the transfer the task belonged to, which `SessionDelegate` took it out of `EngineTasks` for.
    func completed(_ task: URLSessionTask, error: (any Error)?, _ context: DownloadContext) {
        queues.assertOnDelegate()
        if let worker = context.machine.helpers?.worker(ofTask: task.taskIdentifier) {
            helperCompleted(worker, task: task, error: error, context)
            return
        }
        context.task = nil
        switch context.machine.state {
        case .backedUp:
            resumeWhenDrained(context)
        case .closing:
            completeStop(context)
        case .held, .ending:
            // Its end is on its way (a cancel or a stop from the core), or came already.
            return
        case .fetching:
            let failure = error.map { FailureClassifier.network($0, url: context.request.url, idleTimeout: context.request.limits.idleTimeout) }
            perform(context.machine.attempt.requestEnded(failure), context)
        }
    }
}
