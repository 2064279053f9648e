import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One running upload inside the engine: its request, its attempt's decisions, and how other
/// threads may stop it.
///
/// `@unchecked Sendable`: `attempt` is read and written only on the engine's delegate queue;
/// what other threads read or change is in `control` (locked) or in atomics.
final class UploadContext: @unchecked Sendable {
    enum Phase: Equatable {
        case active
        /// Cancelled by the user.
        case cancelling
        /// Stopped by the core (a pause, a yield, shutdown): a plain upload starts again from byte
        /// 0, a resumable one from the offset the server reports.
        case stopping(StopReason)
        /// Stopped by the engine (a time limit, the low-speed limit): the upload ends with this failure.
        case failing(TransferFailure)
    }

    struct Control {
        var phase: Phase = .active
        var task: URLSessionTask?
    }

    let request: TransferRequest
    let plan: UploadPlan
    let control = Mutex(Control())
    var attempt: UploadAttempt
    /// Bytes of the file sent so far by the request in flight, the bytes the server held before
    /// it (a resumable upload's offset), and when the attempt began, for progress and rate.
    let sent = Atomic<Int64>(0)
    let base = Atomic<Int64>(0)
    /// The server's offset when this attempt's first body began (-1 before): the rate counts only what the attempt sent.
    private let firstBase = Atomic<Int64>(-1)
    let startedAt = MonotonicClock.nanoseconds()
    /// Spaces a resumable upload's appends to its rate limit (delegate queue only).
    var pacer = RatePacer()
    /// Set once the upload sends the whole file in one request: then a rate limit cannot be held.
    let sendsWholeFile = Atomic<Bool>(false)
    /// The origins this attempt's host rules allowed (delegate queue only): each other URL is
    /// checked before its first request, so that a `Location` is judged like the job's URL.
    var admittedOrigins: Set<HTTPOrigin> = []
    /// The low-speed limit's window: when it began and the bytes the server held then (delegate queue only).
    var stallWindow: (start: UInt64, bytes: Int64)?
    /// An append's wait for its pace; a stop ends it at once.
    let wakeup: Wakeup

    init(request: TransferRequest, plan: UploadPlan, attempt: UploadAttempt, queues: EngineQueues) {
        self.request = request
        self.plan = plan
        self.attempt = attempt
        self.wakeup = Wakeup(queues: queues)
    }

    var phase: Phase { control.withLock { $0.phase } }

    /// A request begins with the server holding `offset` bytes.
    func beginRequest(at offset: Int64) {
        sent.store(0, ordering: .relaxed)
        base.store(offset, ordering: .relaxed)
        _ = firstBase.compareExchange(expected: -1, desired: offset, ordering: .relaxed)
    }

    /// Bytes of the file the server holds or is being sent now.
    var bytesSoFar: Int64 { base.load(ordering: .relaxed) + sent.load(ordering: .relaxed) }

    /// Moves to `phase` unless it already left `active`; cancels the request, or ends the wait for
    /// the next one. Returns whether it moved.
    func stop(as phase: Phase) -> Bool {
        let moved: Bool = control.withLock { control in
            guard control.phase == .active else { return false }
            control.phase = phase
            control.task?.cancel()
            return true
        }
        if moved { wakeup.wake() }
        return moved
    }

    var progress: TransferProgress {
        let bytes = sent.load(ordering: .relaxed)
        let elapsed = max(MonotonicClock.nanoseconds() &- startedAt, 1)
        // The rate counts what this attempt sent: not the bytes the server held before it.
        let sentInAttempt = max(0, bytes + base.load(ordering: .relaxed) - max(firstBase.load(ordering: .relaxed), 0))
        return TransferProgress(
            bytes: base.load(ordering: .relaxed) + bytes, bytesPerSecond: Int64(Double(sentInAttempt) * 1e9 / Double(elapsed)))
    }
}
