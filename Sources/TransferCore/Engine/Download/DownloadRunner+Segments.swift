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
        switch context.machine.position() {
        case .own:
            return false
        case .atParts:
            return true
        case .lostTrack(let leadEnd):
            // Rather than fetch the helpers' ranges twice, it fetches the rest alone.
            context.request.logger.warning(
                "the download over several connections lost track of its parts; it continues over one",
                metadata: ["offset": "\(context.machine.attempt.offset)", "lead_end": "\(leadEnd)"])
            cancelHelperTasks(context)
            return false
        }
    }

    /// After a helper wrote bytes of its part or gave it up: wakes the attempt when it waits for
    /// that part and may now go on.
    func wakeLeadIfPartReady(_ context: DownloadContext) {
        guard context.wakeup.isWaiting(for: .part), context.machine.helpers?.plan.leadMayGoOn == true else { return }
        context.wakeup.wake([.part])
    }

    /// The attempt reached the next part: takes its bytes into the digest and goes on after them,
    /// or waits for its helper.
    func continueAtPart(_ context: DownloadContext) {
        queues.assertOnDelegate()
        guard context.machine.helpers != nil else { return }
        guard context.machine.state.isUnderWay else {
            completeStop(context)
            return
        }
        if context.machine.attempt.hasFailed {
            perform(context.machine.attempt.proceed(), context)
            return
        }
        switch context.machine.reachedPart() {
        case .finished:
            perform(context.machine.attempt.proceed(), context)
        case .wait:
            // The helper that finishes or gives up the part wakes the attempt (`wakeLeadIfPartReady`),
            // as do a stop and a failure decided meanwhile.
            context.wakeup.park(.part, until: nil) { self.continueAtPart(context) }
        case .misplaced(let range):
            context.request.logger.warning(
                "a part does not begin where the download stands; it continues over one connection",
                metadata: ["offset": "\(context.machine.attempt.offset)", "part": "\(range.start)"])
            cancelHelperTasks(context)
            perform(context.machine.attempt.proceed(), context)
        case .absorb(let range):
            absorb(context, range, from: range.start)
        }
    }

    /// Hands the part's bytes at `from..<range.end` to the digest a few blocks per turn of the
    /// delegate queue, and no faster than it hashes; then moves the attempt past them.
    func absorb(_ context: DownloadContext, _ range: ByteRange, from start: Int64) {
        guard context.machine.helpers != nil else { return }
        guard context.machine.state.isUnderWay else {
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
            context.machine.absorbed(to: nil)
            perform(context.machine.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
            perform(context.machine.attempt.proceed(), context)
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
        context.machine.absorbed(to: range.end)
        fillHelpers(context)
        if reachedHelpers(context) {
            continueAtPart(context)
        } else {
            perform(context.machine.attempt.proceed(), context)
        }
    }

    // MARK: - Checkpoints and endings

    /// Checkpoints the partial file when due: the attempt's offset, and the helpers' ranges past it.
    func checkpointIfDue(_ context: DownloadContext, now: UInt64) {
        let offset = context.machine.attempt.offset
        let progress = context.machine.progress
        guard
            context.sink.advanced(
                to: progress, now: now, checkpointBytes: configuration.checkpointBytes, intervalNanoseconds: checkpointIntervalNanoseconds)
        else { return }
        let jobID = context.request.jobID
        let parts = context.machine.checkpointParts
        do throws(FileIOError) {
            let started = try context.sink.checkpoint(
                offset: offset, progress: progress, now: now, on: queues.io, logger: context.request.logger
            ) { bytes, generation in
                self.events.yield(.checkpoint(jobID: jobID, bytes: bytes, parts: parts, generation: generation))
            }
            if started { context.machine.checkpointStarted(parts) }
        } catch {
            perform(context.machine.attempt.failed(FailureClassifier.disk(error, writing: context.sink.file.path)), context)
        }
    }

    /// Stops the helpers: their requests are cancelled and bytes still arriving are dropped.
    /// Returns the ranges past the attempt's offset that are in the file.
    @discardableResult
    func closeHelpers(_ context: DownloadContext) -> [ByteRange] {
        let open = context.machine.helpers?.isClosed == false
        let ranges = context.machine.closeHelpers()
        if open { cancelHelperTasks(context) }
        return ranges
    }

    /// Cancels the helpers' requests (after the machine closed the helpers).
    func cancelHelperTasks(_ context: DownloadContext) {
        for task in context.helperTasks.values { task.cancel() }
    }
}
