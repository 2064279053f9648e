import Foundation
import Synchronization

/// The transfers the engine runs: by job and by URLSession task, the ones still starting, what
/// interrupted ones keep for their next attempt, and who waits for all of them to stop. Locked:
/// the core's calls arrive on its own threads, the callbacks on the delegate queue.
final class DownloadRegistry: Sendable {
    private struct State {
        var byJob: [String: DownloadContext] = [:]
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var stopped: [String: StoppedTransfer] = [:]
        /// Jobs handed to `start` whose context does not exist yet.
        var starting: Set<String> = []
        /// Of those, the ones cancelled before they began.
        var cancelledBeforeStart: Set<String> = []
        /// Of those, the ones stopped (paused) before they began: their files are kept.
        var stoppedBeforeStart: [String: StopReason] = [:]
        /// Set by `stopAll`: transfers that begin from now on stop at once, keeping their files.
        var stoppingAll = false
        /// The running digests of interrupted transfers, so a retry in this run continues them
        /// instead of reading the partial file again.
        var suspended: [String: SuspendedDigest] = [:]
        var isIdle: Bool { byJob.isEmpty && starting.isEmpty }
    }

    /// Whether a transfer that finished preparing runs.
    enum StartDecision {
        case cancelled
        case stopping
        /// Stopped by a pause while it was starting: nothing was written, the file is kept.
        case stoppedBeforeStart(StopReason)
        case run
    }

    private let state = Mutex(State())
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
        state.withLock { state in
            state.starting.insert(jobID)
            return state.suspended.removeValue(forKey: jobID)
        }
    }

    /// Ends a job's start under one lock, so a cancel or a shutdown never falls between
    /// "starting" and "running": `make` builds its context when it runs.
    func decideStart(_ jobID: String, stoppedAs stopped: StoppedTransfer?, make: () -> DownloadContext?) -> (StartDecision, DownloadContext?) {
        state.withLock { state in
            state.starting.remove(jobID)
            if state.cancelledBeforeStart.remove(jobID) != nil {
                state.stoppedBeforeStart.removeValue(forKey: jobID)
                return (.cancelled, nil)
            }
            if let reason = state.stoppedBeforeStart.removeValue(forKey: jobID) { return (.stoppedBeforeStart(reason), nil) }
            if state.stoppingAll, let stopped {
                state.stopped[jobID] = stopped
                return (.stopping, nil)
            }
            guard let context = make() else { return (.run, nil) }
            state.byJob[jobID] = context
            return (.run, context)
        }
    }

    // MARK: - Lookups

    func context(forJob jobID: String) -> DownloadContext? {
        state.withLock { $0.byJob[jobID] }
    }

    var running: [DownloadContext] {
        state.withLock { Array($0.byJob.values) }
    }

    func register(task: Int, for context: DownloadContext) {
        tasks.register(task, .download(context))
    }

    func unregister(task: Int) -> DownloadContext? {
        guard case .download(let context) = tasks.unregister(task) else { return nil }
        return context
    }

    // MARK: - Control

    /// Finds a job to cancel: `.some(nil)` while it is still starting (it will not begin).
    func cancelTarget(_ jobID: String) -> DownloadContext?? {
        state.withLock { state in
            if state.starting.contains(jobID) {
                state.cancelledBeforeStart.insert(jobID)
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) } ?? nil
        }
    }

    /// Finds a job to stop (pause): `.some(nil)` while it is still starting (it will not begin).
    func stopTarget(_ jobID: String, reason: StopReason) -> DownloadContext?? {
        state.withLock { state in
            if state.starting.contains(jobID) {
                if state.cancelledBeforeStart.contains(jobID) { return nil }
                state.stoppedBeforeStart[jobID] = reason
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) } ?? nil
        }
    }

    /// Marks the engine as stopping; returns what runs now.
    func beginStoppingAll() -> [DownloadContext] {
        state.withLock { state in
            state.stoppingAll = true
            return Array(state.byJob.values)
        }
    }

    /// Waits until no transfer runs or starts, then returns how far each stopped one got.
    func waitUntilIdle() async -> [String: StoppedTransfer] {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = state.withLock { state in
                if state.isIdle { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return state.withLock { $0.stopped }
    }

    /// Records how far a transfer stopped for shutdown got.
    func recordStopped(_ jobID: String, _ stopped: StoppedTransfer) {
        state.withLock { $0.stopped[jobID] = stopped }
    }

    // MARK: - Suspended digests

    func suspend(_ jobID: String, _ digest: SuspendedDigest) {
        state.withLock { $0.suspended[jobID] = digest }
    }

    func forget(_ jobID: String) {
        state.withLock { _ = $0.suspended.removeValue(forKey: jobID) }
    }

    // MARK: - Ending

    /// Drops a finished transfer, then wakes `waitUntilIdle` when none is left.
    func remove(_ jobID: String) {
        state.withLock { _ = $0.byJob.removeValue(forKey: jobID) }
        rates.leave(jobID)
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
}
