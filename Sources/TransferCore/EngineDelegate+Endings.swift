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
    // MARK: - Endings

    func remove(_ context: TransferContext) {
        state.withLock { _ = $0.byJob.removeValue(forKey: context.request.jobID) }
        releaseStopWaitersIfIdle()
    }

    func releaseStopWaitersIfIdle() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            guard state.isIdle else { return [] }
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        waiters.forEach { $0.resume() }
    }

    func finishCancelled(_ context: TransferContext) {
        context.file.unlink()
        events.yield(.stopped(jobID: context.request.jobID, bytes: 0))
        remove(context)
    }

    func finishStopped(_ context: TransferContext) {
        let offset = context.offset
        let kept = Glibc.fdatasync(context.file.fd) == 0 ? offset : context.lastCheckpointOffset
        // Reported here too (not only as an event), so a shutdown records what a resume needs even
        // when the core has not yet applied earlier events.
        let stopped = StoppedTransfer(bytes: kept, validator: context.validator, totalBytes: context.totalBytes)
        state.withLock { $0.stopped[context.request.jobID] = stopped }
        events.yield(.stopped(jobID: context.request.jobID, bytes: kept))
        remove(context)
    }

    /// Ends the attempt: a retryable failure keeps the partial file for the next one.
    func end(_ context: TransferContext, _ failure: TransferFailure) {
        if failure.retryable {
            interrupt(context, failure)
        } else {
            fail(context, failure.error)
        }
    }

    /// Syncs the partial file and reports how far it got, for a later attempt to continue.
    func interrupt(_ context: TransferContext, _ failure: TransferFailure) {
        let synced = Glibc.fdatasync(context.file.fd) == 0
        let kept = synced ? context.offset : context.lastCheckpointOffset
        let jobID = context.request.jobID
        if synced {
            let suspended = SuspendedDigest(
                bytes: kept, inode: context.file.inode, digest: context.digest.current(), announcedDigest: context.announcedDigest)
            state.withLock { $0.suspended[jobID] = suspended }
        }
        context.request.logger.info(
            "transfer interrupted", metadata: ["bytes": "\(kept)", "error": "\(failure.error.message)"])
        events.yield(
            .interrupted(
                jobID: jobID, error: failure.error,
                kept: StoppedTransfer(bytes: kept, validator: context.validator, totalBytes: context.totalBytes),
                retryAfter: failure.retryAfter))
        remove(context)
    }

    func fail(_ context: TransferContext, _ error: JobError) {
        forget(jobID: context.request.jobID)
        context.file.unlink()
        context.request.logger.warning("transfer failed", metadata: ["error": "\(error.message)"])
        events.yield(.failed(jobID: context.request.jobID, error: error))
        remove(context)
    }
}
