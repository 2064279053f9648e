import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

/// A download over several connections, from the attempt's side: reaching the helpers' parts
/// (their bytes go into the digest in order), checkpoints that record the parts, and closing the
/// helpers when the attempt ends. The helpers themselves are in `DownloadRunner+Helpers`.
extension DownloadRunner {
    // MARK: - The attempt reaching a part (delegate queue)

    /// Whether the attempt's next segment begins where the helpers' parts do.
    func reachedHelpers(_ context: DownloadContext) -> Bool {
        guard let leadEnd = context.segments.flatMap({ $0.isClosed ? nil : $0.plan.leadEnd }), let total = context.attempt.totalBytes
        else { return false }
        if context.attempt.offset > leadEnd {
            // The attempt went past where the helpers' parts begin, which the plan never allows:
            // rather than fetch their ranges twice, it fetches the rest alone.
            context.request.logger.warning(
                "the download over several connections lost track of its parts; it continues over one",
                metadata: ["offset": "\(context.attempt.offset)", "lead_end": "\(leadEnd)"])
            closeHelpers(context)
            context.attempt.rangeLimit = nil
            return false
        }
        return context.attempt.offset == leadEnd && context.attempt.offset < total
    }

    /// After a helper wrote bytes of its part or gave it up: wakes the attempt when it waits for
    /// that part and may now go on.
    func wakeLeadIfPartReady(_ context: DownloadContext) {
        guard context.wakeup.isWaiting(for: .part), context.segments?.plan.leadMayGoOn == true else { return }
        context.wakeup.wake([.part])
    }

    /// The attempt reached the next part: takes its bytes into the digest and goes on after them,
    /// or waits for its helper.
    func continueAtPart(_ context: DownloadContext) {
        queues.assertOnDelegate()
        guard context.segments != nil else { return }
        let phase = context.phase
        guard phase.isUnderWay else {
            completeStop(context)
            return
        }
        if context.attempt.hasFailed {
            perform(context.attempt.proceed(), context)
            return
        }
        switch context.segments?.plan.leadArrived() ?? .finished {
        case .finished:
            perform(context.attempt.proceed(), context)
        case .wait:
            // The helper that finishes or gives up the part wakes the attempt (`wakeLeadIfPartReady`),
            // as do a stop and a failure decided meanwhile.
            context.wakeup.park(.part, until: nil) { self.continueAtPart(context) }
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
            context.segments?.absorbing = range
            context.attempt.rangeLimit = context.segments?.plan.leadEnd
            absorb(context, range, from: range.start)
        }
    }

    /// Hands the part's bytes at `from..<range.end` to the digest a few blocks per turn of the
    /// delegate queue, and no faster than it hashes; then moves the attempt past them.
    func absorb(_ context: DownloadContext, _ range: ByteRange, from start: Int64) {
        guard context.segments != nil else { return }
        let phase = context.phase
        guard phase.isUnderWay else {
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
            context.segments?.absorbing = nil
            perform(context.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
            perform(context.attempt.proceed(), context)
            return
        }
        guard position == range.end else {
            let next = position
            let goOn: @Sendable () -> Void = { self.queues.onDelegate { self.absorb(context, range, from: next) } }
            if blocks < 8 {
                // The digest is behind: go on once hashing has brought its backlog under the mark.
                context.sink.digest.whenPending(below: configuration.backlogHighWater, goOn)
            } else {
                // A few blocks per turn, so that the transfers' callbacks are not held up.
                goOn()
            }
            return
        }
        context.attempt.skipped(to: range.end)
        context.segments?.absorbing = nil
        fillHelpers(context)
        if reachedHelpers(context) {
            continueAtPart(context)
        } else {
            perform(context.attempt.proceed(), context)
        }
    }

    // MARK: - Checkpoints and endings

    /// Checkpoints the partial file when due: the attempt's offset, and the helpers' ranges past it.
    func checkpointIfDue(_ context: DownloadContext, now: UInt64) {
        let offset = context.attempt.offset
        // Once the helpers are closed (the file started over, say), their ranges are not recorded.
        let open = context.segments?.isClosed == false
        let progress = offset + (open ? context.segments?.bytesAhead ?? 0 : 0)
        guard
            context.sink.advanced(
                to: progress, now: now, checkpointBytes: configuration.checkpointBytes, intervalNanoseconds: checkpointIntervalNanoseconds)
        else { return }
        let jobID = context.request.jobID
        let parts = open ? context.segments?.ranges ?? [] : []
        do throws(FileIOError) {
            let started = try context.sink.checkpoint(
                offset: offset, progress: progress, now: now, on: queues.io, logger: context.request.logger
            ) { bytes, generation in
                self.events.yield(.checkpoint(jobID: jobID, bytes: bytes, parts: parts, generation: generation))
            }
            if started, open { context.segments?.lastCheckpointParts = parts }
        } catch {
            perform(context.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
        }
    }

    /// Stops the helpers: their requests are cancelled and bytes still arriving are dropped.
    /// Returns the ranges past the attempt's offset that are in the file.
    @discardableResult
    func closeHelpers(_ context: DownloadContext) -> [ByteRange] {
        guard let ranges = context.segments?.close() else { return context.keptParts }
        context.control.withLock { control in
            for task in control.helperTasks.values { task.cancel() }
        }
        return ranges
    }
}
