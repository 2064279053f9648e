import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

extension DownloadRunner {
    // MARK: - Carrying out decisions (delegate queue)

    /// Carries out an attempt's actions in order. When one that touches the disk fails, the
    /// attempt decides again and its new actions replace the rest. While `answering` a response,
    /// returns the answer (`.allow` only when the attempt accepts the body).
    @discardableResult
    func perform(_ actions: [DownloadAttempt.Action], _ context: DownloadContext, answering: Bool = false) -> URLSession.ResponseDisposition {
        queues.assertOnDelegate()
        var pending = actions[...]
        var disposition = URLSession.ResponseDisposition.cancel
        while let action = pending.popFirst() {
            switch action {
            case .acceptBody:
                disposition = .allow
                if !context.machine.attempt.rangesUsable { context.rangesUnusable.store(true, ordering: .relaxed) }
            case .cancelRequest:
                // A response's own answer cancels its request; elsewhere the task is cancelled.
                if answering { disposition = .cancel } else if context.machine.state == .fetching { context.task?.cancel() }
            case .startOver(let reason):
                // Another version: what the helpers fetched or an earlier attempt kept is not its.
                closeHelpers(context)
                context.machine.startedOver()
                do throws(FileIOError) {
                    try context.sink.startOver()
                    context.request.logger.info("starting the download over from byte 0", metadata: ["reason": "\(reason)"])
                } catch {
                    let failure = FailureClassifier.disk(error, writing: context.sink.file.path)
                    pending = context.machine.attempt.startOverFailed(failure, answering: answering)[...]
                }
            case .hashSHA512:
                context.sink.hashSHA512()
            case .report(let report):
                events.yield(
                    .responded(
                        jobID: context.request.jobID, totalBytes: report.totalBytes, validator: report.validator,
                        startOffset: report.startOffset, partialInode: context.sink.file.inode,
                        generation: context.sink.generation.load(ordering: .sequentiallyConsistent),
                        finalURL: report.finalURL.map(Redaction.url), contentEncoding: report.contentEncoding,
                        rangesRefused: report.rangesRefused))
            case .send(let plan):
                send(plan, context)
            case .checkRedirect(let target):
                checkRedirect(context, target)
            case .nextSegment:
                // One segment done: size the next one by how much piled up during this one, or by
                // the rate limit, and wait until the bytes so far fit that limit.
                let rate = rates.rate(for: context.request.jobID)
                let sized = context.sink.nextSegmentBytes(
                    after: context.machine.attempt.segmentBytes, bounds: configuration.segmentBytes, highWater: configuration.backlogHighWater)
                context.machine.attempt.segmentBytes =
                    RatePacer.segmentBytes(for: rate, upTo: configuration.segmentBytes.upperBound)
                    ?? max(sized, configuration.segmentBytes.lowerBound)
                let now = MonotonicClock.nanoseconds()
                let wait = context.machine.pacer.delay(endedAt: context.machine.attempt.offset, now: now, rate: rate)
                if wait > 0 {
                    continueWhenPaced(context, at: now + wait)
                } else {
                    resumeWhenDrained(context)
                }
            case .land:
                land(context)
            case .retryLater(let failure):
                if endsOwn(context) { interrupt(context, failure) }
            case .fail(let error):
                if endsOwn(context) { fail(context, error) }
            }
        }
        return disposition
    }

    /// Sends a request, unless the transfer was stopped or cancelled meanwhile.
    func send(_ plan: DownloadAttempt.RequestPlan, _ context: DownloadContext) {
        guard let session, !sessionInvalidated.load(ordering: .acquiring) else {
            // The engine is gone: the transfer ends as at shutdown.
            if endsOwn(context) { finishStopped(context, reason: .shutdown) }
            return
        }
        guard context.machine.state == .fetching else {
            completeStop(context)
            return
        }
        let task = session.dataTask(with: RequestBuilder.request(plan, for: context.request))
        task.taskDescription = context.request.jobID
        context.sink.segmentStarted()
        context.machine.requestSent(plan.range, now: MonotonicClock.nanoseconds())
        registry.register(task: task.taskIdentifier, for: context)
        // A cancel or a stop reaches the transfer on this queue too: after this, and it cancels the task.
        context.task = task
        task.resume()
    }

    /// Checks a redirect's target against the host rules on the I/O queue (its name may need
    /// resolving), then asks it, unless the transfer was stopped meanwhile.
    func checkRedirect(_ context: DownloadContext, _ target: URL) {
        queues.onIO {
            let refused = TransferPreparation.hostFailure(for: target, hosts: self.hosts)
            self.queues.onDelegate {
                guard context.machine.state == .fetching else {
                    self.completeStop(context)
                    return
                }
                self.perform(context.machine.attempt.redirectChecked(target, refused: refused), context)
            }
        }
    }

    /// Waits, off the delegate queue, for the chunk backlog to drain, then continues with a ranged
    /// request (after a pause, or for the next segment).
    func resumeWhenDrained(_ context: DownloadContext) {
        queues.assertOnDelegate()
        // A cancel or a stop does not wait for the backlog.
        guard context.machine.state.isUnderWay else {
            completeStop(context)
            return
        }
        guard backlogDrained(orRetry: { self.resumeWhenDrained(context) }) else { return }
        feed(.drained, context)
    }

    /// Goes on with the attempt's next request, or with the helpers' part it reached.
    func proceed(_ context: DownloadContext) {
        if reachedHelpers(context) {
            continueAtPart(context)
            return
        }
        context.request.logger.debug("continuing a paused transfer", metadata: ["offset": "\(context.machine.attempt.offset)"])
        perform(context.machine.attempt.proceed(), context)
    }

    /// Whether the delegate queue's backlog is down to the low-water mark; when not, `retry` runs
    /// on the delegate queue once it is (at the end of the operation that brings it there).
    func backlogDrained(orRetry retry: @escaping @Sendable () -> Void) -> Bool {
        guard queues.delegateBacklog > configuration.backlogLowWater else { return true }
        queues.whenBacklog(atMost: configuration.backlogLowWater, retry)
        return false
    }

    /// Waits until `due` on the monotonic clock, then continues with the next segment. One timer
    /// is armed for `due`; a stop, a failure decided meanwhile and a changed rate limit wake the
    /// transfer earlier (`Wakeup`), and it looks again: a lifted limit continues at once, a raised
    /// one brings `due` forward.
    func continueWhenPaced(_ context: DownloadContext, at due: UInt64) {
        queues.assertOnDelegate()
        guard context.machine.state.isUnderWay else {
            completeStop(context)
            return
        }
        let rate = rates.rate(for: context.request.jobID)
        let due = context.machine.pacer.due(due, at: rate)
        let now = MonotonicClock.nanoseconds()
        // A failure decided meanwhile (the job's deadline) ends the attempt at once.
        guard now < due, !context.machine.attempt.hasFailed, rate != nil else {
            resumeWhenDrained(context)
            return
        }
        context.wakeup.park(.paced, until: rates.recheckTime(due: due, now: now)) { self.continueWhenPaced(context, at: due) }
    }

    /// Wakes the transfers that wait for their pace, to look at their rate again.
    func ratesChanged() {
        for context in registry.roster.running { context.wakeup.wake([.paced]) }
    }

    // MARK: - The machine's inputs and endings

    /// Gives `input` to the transfer's machine and carries out what it decides.
    func feed(_ input: DownloadMachine.Input, _ context: DownloadContext) {
        queues.assertOnDelegate()
        for action in context.machine.handle(input) {
            switch action {
            case .cancelRequests: context.cancelRequests()
            case .cancelLeadRequest: context.task?.cancel()
            case .proceed: proceed(context)
            case .finish(let ending): finish(context, ending)
            }
        }
    }

    /// Ends a transfer that a cancel or a stop closed.
    func finish(_ context: DownloadContext, _ ending: DownloadMachine.Ending) {
        switch ending {
        case .cancelled: finishCancelled(context)
        case .stopped(let reason): finishStopped(context, reason: reason)
        }
    }

    /// The attempt's step that was pending (a request's end, a wait) came back and found the
    /// transfer no longer under way: a cancel or a stop that closes it ends it now.
    func completeStop(_ context: DownloadContext) {
        feed(.settled, context)
    }

    /// The attempt comes to its own end (`claim`: interrupted or failed, or landing): true when it
    /// claimed the end before the core did and ends so. Otherwise the core's cancel or stop ends
    /// it: now, when that already closes it, or once it arrives.
    func endsOwn(_ context: DownloadContext, claim: DownloadContext.EndClaim.Holder = .own) -> Bool {
        switch context.machine.ownEnd(granted: context.endClaim.take(claim) == .open) {
        case .granted:
            return true
        case .held, .ignored:
            return false
        case .finish(let ending):
            finish(context, ending)
            return false
        }
    }

    func finishCancelled(_ context: DownloadContext) {
        closeHelpers(context)
        context.sink.file.unlink()
        events.yield(.stopped(jobID: context.request.jobID, bytes: 0, reason: .cancel))
        registry.remove(context.request.jobID)
    }

    /// Closes the helpers and syncs the partial file: what a later attempt can continue from (the
    /// last checkpoint's when the sync fails), and whether the sync succeeded.
    private func keepDurable(_ context: DownloadContext) -> (kept: StoppedTransfer, synced: Bool) {
        let ranges = closeHelpers(context)
        let (bytes, synced) = context.sink.syncNow(offset: context.machine.attempt.offset)
        let parts = context.machine.partsKept(closed: ranges, synced: synced)
        let kept = StoppedTransfer(bytes: bytes, validator: context.machine.attempt.validator, totalBytes: context.machine.attempt.totalBytes, parts: parts)
        return (kept, synced)
    }

    func finishStopped(_ context: DownloadContext, reason: StopReason) {
        let (stopped, _) = keepDurable(context)
        let (kept, parts) = (stopped.bytes, stopped.parts)
        // Recorded here too (not only as an event), so a shutdown records what a resume needs even
        // when the core has not yet applied earlier events.
        registry.recordStopped(context.request.jobID, stopped)
        if context.request.segments > 1 {
            // The ranges past the offset, for the core to keep with the job.
            events.yield(
                .checkpoint(
                    jobID: context.request.jobID, bytes: kept, parts: parts,
                    generation: context.sink.generation.load(ordering: .sequentiallyConsistent)))
        }
        events.yield(.stopped(jobID: context.request.jobID, bytes: kept, reason: reason))
        registry.remove(context.request.jobID)
    }

    /// Syncs the partial file and reports how far it got, for a later attempt to continue.
    func interrupt(_ context: DownloadContext, _ failure: TransferFailure) {
        let (stopped, synced) = keepDurable(context)
        let kept = stopped.bytes
        let jobID = context.request.jobID
        if synced {
            registry.suspend(
                jobID,
                SuspendedDigest(
                    bytes: kept, inode: context.sink.file.inode, digest: context.sink.digest.current(),
                    announcedDigest: context.machine.attempt.announcedDigest))
        }
        context.request.logger.info("transfer interrupted", metadata: ["bytes": "\(kept)", "error": "\(failure.error.message)"])
        events.yield(
            .interrupted(
                jobID: jobID, error: failure.error, kept: stopped, retryAfter: failure.retryAfter))
        registry.remove(jobID)
        HeapPolicy.transferEnded(bytes: kept)
    }

    func fail(_ context: DownloadContext, _ error: JobError) {
        closeHelpers(context)
        registry.forget(context.request.jobID)
        context.sink.file.unlink()
        context.request.logger.warning("transfer failed", metadata: ["error": "\(error.message)"])
        events.yield(.failed(jobID: context.request.jobID, error: error))
        registry.remove(context.request.jobID)
    }
}
