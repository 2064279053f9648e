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
    /// Ends an attempt from outside the delegate callbacks (a deadline or the low-speed limit).
    func abort(_ context: TransferContext, _ failure: TransferFailure) {
        context.failure = failure
        context.control.withLock { control in
            if control.phase == .active { control.task?.cancel() }
        }
    }

    /// Runs on the delegate queue once a second: fails transfers past their job's deadline and
    /// interrupts those slower than their low-speed limit for its whole window.
    func checkLimits() {
        let contexts = state.withLock { Array($0.byJob.values) }
        let now = MonotonicClock.nanoseconds()
        let wallClock = Date()
        for context in contexts where context.failure == nil && context.phase == .active {
            if let deadline = context.request.deadline, wallClock >= deadline {
                abort(
                    context,
                    .permanent(
                        JobError(
                            code: "time_limit",
                            message: "the job ran out of time (its maximum time, max_time_seconds, ended at "
                                + "\(WireCoding.formatTimestamp(deadline))); submit it again with a longer limit")))
                continue
            }
            let limits = context.request.limits
            guard limits.lowSpeedBytesPerSecond > 0 else { continue }
            let elapsed = Double(now &- context.stallWindowStart) / 1e9
            guard elapsed >= limits.lowSpeedTime else { continue }
            let rate = Double(context.offset - context.stallWindowOffset) / elapsed
            context.stallWindowStart = now
            context.stallWindowOffset = context.offset
            if rate < Double(limits.lowSpeedBytesPerSecond) {
                abort(
                    context,
                    .transient(
                        JobError(
                            code: "too_slow",
                            message: "\(context.request.url.host ?? "the server") sent \(Int64(rate)) bytes/s over \(Int(elapsed)) s, "
                                + "below the low-speed limit of \(limits.lowSpeedBytesPerSecond) bytes/s (low_speed_bytes_per_second)")))
            }
        }
    }
}
