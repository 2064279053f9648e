import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

extension EngineDelegate {
    // MARK: - Progress and checkpoints

    /// Cuts the partial file back to 0 and starts a new generation, so no sync begun for the old
    /// contents is taken as a checkpoint of the new ones.
    func startOver(_ context: TransferContext, because reason: String) throws(FileIOError) {
        try context.file.truncate(to: 0)
        context.generation.add(1, ordering: .sequentiallyConsistent)
        setOffset(context, 0)
        // A new version: digests announced for the old one no longer apply.
        context.digest.reset(to: FileDigest())
        context.announcedDigest = nil
        context.checkedSpace = false
        context.request.logger.info("starting the download over from byte 0", metadata: ["reason": "\(reason)"])
    }

    func setOffset(_ context: TransferContext, _ offset: Int64) {
        context.offset = offset
        context.progress.store(offset, ordering: .relaxed)
        if offset < context.lastCheckpointOffset { context.lastCheckpointOffset = offset }
        if offset < context.rateSampleOffset { context.rateSampleOffset = offset }
    }

    /// Syncs the partial file off the delegate queue, then reports the offset as durable.
    func checkpoint(_ context: TransferContext, now: UInt64) {
        guard !context.checkpointInFlight.exchange(true, ordering: .acquiring) else { return }
        let offset = context.offset
        let file = context.file
        context.lastCheckpointOffset = offset
        context.lastCheckpointTime = now
        let jobID = context.request.jobID
        let generation = context.generation.load(ordering: .sequentiallyConsistent)
        ioQueue.async {
            if Glibc.fdatasync(file.fd) == 0 {
                self.events.yield(.checkpoint(jobID: jobID, bytes: offset, generation: generation))
            } else {
                context.request.logger.warning("cannot sync a partial file", metadata: ["error": "\(FileIOError("fdatasync", file.path))"])
            }
            context.checkpointInFlight.store(false, ordering: .releasing)
        }
    }

    /// Doubles the segment while the disk keeps up with the network, halves it when chunks pile up.
    func adaptSegment(_ context: TransferContext) {
        let limits = configuration.segmentBytes
        if context.segmentPeakBacklog < configuration.backlogHighWater / 4 {
            context.segmentBytes = min(context.segmentBytes * 2, limits.upperBound)
        } else if context.segmentPeakBacklog > configuration.backlogHighWater {
            context.segmentBytes = max(context.segmentBytes / 2, limits.lowerBound)
        }
    }

    /// Waits, off the delegate queue, for the chunk backlog to drain, then continues with a ranged
    /// request (after a pause, or for the next segment).
    func resumeWhenDrained(_ context: TransferContext) {
        if queue.operationCount <= configuration.backlogLowWater {
            let resume: Bool = context.control.withLock { control in
                guard control.phase == .pausing || control.phase == .active else { return false }
                control.phase = .active
                return true
            }
            if resume {
                context.request.logger.debug("continuing a paused transfer", metadata: ["offset": "\(context.offset)"])
                sendRequest(context)
            } else {
                completeStop(context)
            }
            return
        }
        ioQueue.asyncAfter(deadline: .now() + .milliseconds(2)) {
            self.queue.addOperation { self.resumeWhenDrained(context) }
        }
    }

    func completeStop(_ context: TransferContext) {
        switch context.phase {
        case .cancelling: finishCancelled(context)
        default: finishStopped(context)
        }
    }
}
