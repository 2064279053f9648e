import Foundation
import Synchronization

/// The downloads the engine runs (`TransferRoster`: by job, the ones still starting, a stop or
/// cancel that comes meanwhile, shutdown), and what only downloads keep beside them: how far each
/// transfer stopped for shutdown got, and the running digests of interrupted ones. Callbacks find
/// their transfer by task in `EngineTasks`.
final class DownloadRegistry: Sendable {
    private struct Kept {
        var stopped: [String: StoppedTransfer] = [:]
        /// The running digests of interrupted transfers, so a retry in this run continues them
        /// instead of reading the partial file again.
        var suspended: [String: SuspendedDigest] = [:]
    }

    /// The downloads running and starting, by job: what a cancel, a stop or shutdown finds.
    let roster = TransferRoster<DownloadContext>()
    private let kept = Mutex(Kept())
    /// The limits a running transfer shares: it stops sharing them once removed here.
    let rates: RateGovernor

    /// The engine's table of running tasks, shared with uploads.
    let tasks: EngineTasks

    init(rates: RateGovernor, tasks: EngineTasks) {
        self.rates = rates
        self.tasks = tasks
    }

    // MARK: - Starting

    /// Notes a job as starting; returns what its last interrupted attempt in this run kept.
    func beginStarting(_ jobID: String) -> SuspendedDigest? {
        roster.beginStarting(jobID)
        return kept.withLock { $0.suspended.removeValue(forKey: jobID) }
    }

    /// Ends a job's start under the roster's lock, so a cancel or a shutdown never falls between
    /// "starting" and "running": `make` builds its context when it runs. During shutdown a
    /// transfer with a prepared file (`stoppedAs`) stops at once; one whose preparation failed
    /// reports that failure.
    func decideStart(_ jobID: String, stoppedAs stopped: StoppedTransfer?, make: () -> DownloadContext?) -> TransferRoster<DownloadContext>.Admission {
        let admission = roster.admit(jobID, stopsWhenStoppingAll: stopped != nil, make: make)
        if case .stoppingAll = admission, let stopped { recordStopped(jobID, stopped) }
        return admission
    }

    // MARK: - Tasks

    func register(task: Int, for context: DownloadContext) {
        tasks.register(task, .download(context))
    }

    func unregister(task: Int) -> DownloadContext? {
        guard case .download(let context) = tasks.unregister(task) else { return nil }
        return context
    }

    // MARK: - Shutdown

    /// Waits until no transfer runs or starts, then returns how far each stopped one got.
    func waitUntilIdle() async -> [String: StoppedTransfer] {
        await roster.waitUntilIdle()
        return kept.withLock { $0.stopped }
    }

    /// Records how far a transfer stopped for shutdown got.
    func recordStopped(_ jobID: String, _ stopped: StoppedTransfer) {
        kept.withLock { $0.stopped[jobID] = stopped }
    }

    // MARK: - Suspended digests

    func suspend(_ jobID: String, _ digest: SuspendedDigest) {
        kept.withLock { $0.suspended[jobID] = digest }
    }

    func forget(_ jobID: String) {
        kept.withLock { _ = $0.suspended.removeValue(forKey: jobID) }
    }

    // MARK: - Ending

    /// Drops a transfer that ended (or a job that ended while starting), then wakes
    /// `waitUntilIdle` when none is left.
    func remove(_ jobID: String) {
        rates.leave(jobID)
        roster.remove(jobID)
    }
}
