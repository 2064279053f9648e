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
        /// Stopped for shutdown: the upload starts again after the restart.
        case stopping
    }

    struct Control {
        var phase: Phase = .active
        var task: URLSessionUploadTask?
    }

    let request: TransferRequest
    let plan: UploadPlan
    let control = Mutex(Control())
    var attempt: UploadAttempt
    /// Bytes of the file sent so far in this attempt, and when it began, for progress and rate.
    let sent = Atomic<Int64>(0)
    let startedAt = MonotonicClock.nanoseconds()

    init(request: TransferRequest, plan: UploadPlan, attempt: UploadAttempt) {
        self.request = request
        self.plan = plan
        self.attempt = attempt
    }

    var phase: Phase { control.withLock { $0.phase } }

    /// Moves to `phase` unless it already left `active`; cancels the request. Returns whether it moved.
    func stop(as phase: Phase) -> Bool {
        control.withLock { control in
            guard control.phase == .active else { return false }
            control.phase = phase
            control.task?.cancel()
            return true
        }
    }

    var progress: TransferProgress {
        let bytes = sent.load(ordering: .relaxed)
        let elapsed = max(MonotonicClock.nanoseconds() &- startedAt, 1)
        return TransferProgress(bytes: bytes, bytesPerSecond: Int64(Double(bytes) * 1e9 / Double(elapsed)))
    }
}
