import Synchronization

/// The transfers of one kind the engine runs, by job, and the ones still starting: what a stop,
/// a cancel or shutdown finds, and who waits for all of them to end. One for downloads
/// (`DownloadRegistry`), one for uploads (`UploadRunner`); callbacks find their transfer by task
/// in `EngineTasks` instead. Locked: the core's calls arrive on its own threads, the ends on the
/// delegate queue.
///
/// A job is *starting* from `beginStarting` until `admit` lets it run: its transfer does not exist
/// yet, so a stop or cancel meanwhile is kept here (`claim`) and `admit` answers it instead of
/// running. A job `admit` does not let run stays starting until `remove`, once its end was
/// reported: shutdown's `waitUntilIdle` never returns before it.
final class TransferRoster<Context: AnyObject & Sendable>: Sendable {
    private struct State {
        var byJob: [String: Context] = [:]
        var starting: Set<String> = []
        /// Jobs stopped or cancelled (`.cancel`) while they were starting, and why.
        var stoppedBeforeStart: [String: StopReason] = [:]
        /// Set by `beginStoppingAll`: transfers admitted from now on stop at once.
        var stoppingAll = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var isIdle: Bool { byJob.isEmpty && starting.isEmpty }
    }

    /// What `admit` decided for a job that finished starting.
    enum Admission {
        /// It runs, as this transfer.
        case run(Context)
        /// A stop or cancel came while it started (`.cancel`: it is cancelled).
        case stoppedBeforeStart(StopReason)
        /// The engine stops everything (shutdown) and it did not begin.
        case stoppingAll
        /// `make` made no transfer: it ended as it started.
        case none
    }

    private let state = Mutex(State())

    /// Notes a job as starting.
    func beginStarting(_ jobID: String) {
        state.withLock { _ = $0.starting.insert(jobID) }
    }

    /// Ends a job's start under one lock, so a cancel or a shutdown never falls between
    /// "starting" and "running": `make` builds the transfer when it runs. While the engine stops
    /// everything, the job does not run unless `stopsWhenStoppingAll` is false (a start that
    /// failed, which `make` answers with nil, reports its failure rather than a stop).
    func admit(_ jobID: String, stopsWhenStoppingAll: Bool = true, make: () -> Context?) -> Admission {
        state.withLock { state in
            if let reason = state.stoppedBeforeStart.removeValue(forKey: jobID) { return .stoppedBeforeStart(reason) }
            if state.stoppingAll, stopsWhenStoppingAll { return .stoppingAll }
            guard let context = make() else { return .none }
            state.starting.remove(jobID)
            state.byJob[jobID] = context
            return .run(context)
        }
    }

    /// Ends a job's start as running `context` whatever came meanwhile, for a transfer that ends
    /// itself (its machine stops it at once): returns the stop or cancel that came while it
    /// started, or `.shutdown` when the engine stops everything; nil: it runs.
    func admitRunning(_ jobID: String, _ context: Context) -> StopReason? {
        state.withLock { state in
            state.starting.remove(jobID)
            state.byJob[jobID] = context
            if let reason = state.stoppedBeforeStart.removeValue(forKey: jobID) { return reason }
            return state.stoppingAll ? .shutdown : nil
        }
    }

    /// The running transfer of `jobID` to stop for `reason`: `.some(nil)` while it is still
    /// starting (it will not begin: `admit` answers the stop); nil when the job is not here, or
    /// was cancelled while starting and a later stop finds nothing more to do. A cancel replaces
    /// an earlier stop; a stop never replaces a cancel.
    func claim(_ jobID: String, for reason: StopReason) -> Context?? {
        state.withLock { state in
            if state.starting.contains(jobID) {
                if state.stoppedBeforeStart[jobID] == .cancel { return reason == .cancel ? .some(nil) : nil }
                state.stoppedBeforeStart[jobID] = reason
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) }
        }
    }

    func context(forJob jobID: String) -> Context? {
        state.withLock { $0.byJob[jobID] }
    }

    var running: [Context] {
        state.withLock { Array($0.byJob.values) }
    }

    /// Marks the engine as stopping everything; returns what runs now.
    func beginStoppingAll() -> [Context] {
        state.withLock { state in
            state.stoppingAll = true
            return Array(state.byJob.values)
        }
    }

    /// Returns once no transfer runs or starts.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.isIdle { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Drops a transfer that ended (or a job that ended while starting), then wakes
    /// `waitUntilIdle` when none is left.
    func remove(_ jobID: String) {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.byJob.removeValue(forKey: jobID)
            state.starting.remove(jobID)
            state.stoppedBeforeStart.removeValue(forKey: jobID)
            guard state.isIdle else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        waiters.forEach { $0.resume() }
    }
}
