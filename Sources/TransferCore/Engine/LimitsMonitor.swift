import Foundation
import TransferProtocol

/// Once a second, on the delegate queue: fails transfers past their job's deadline and
/// interrupts those slower than their low-speed limit over its whole window.
///
/// `@unchecked Sendable`: the timer is set up in init and only cancelled after.
final class LimitsMonitor: @unchecked Sendable {
    private let ticker: any DispatchSourceTimer

    init(runner: TransferRunner) {
        ticker = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.engine.limits"))
        ticker.schedule(deadline: .now() + 1, repeating: 1)
        ticker.setEventHandler { [weak runner] in
            guard let runner else { return }
            runner.queues.onDelegate { Self.check(runner, now: MonotonicClock.nanoseconds(), wallClock: Date()) }
        }
        ticker.resume()
    }

    deinit {
        ticker.cancel()
    }

    static func check(_ runner: TransferRunner, now: UInt64, wallClock: Date) {
        runner.queues.assertOnDelegate()
        for context in runner.registry.running where !context.attempt.isOver && !context.attempt.hasFailed && context.phase == .active {
            guard let failure = exceeded(context, now: now, wallClock: wallClock) else { continue }
            runner.perform(context.attempt.failed(failure), context)
        }
    }

    /// The limit a transfer exceeds, if any; restarts its low-speed window when that is over.
    private static func exceeded(_ context: TransferContext, now: UInt64, wallClock: Date) -> TransferFailure? {
        if let deadline = context.request.deadline, wallClock >= deadline {
            return .permanent(
                JobError(
                    code: .timeLimit,
                    message: "the job ran out of time (its maximum time, max_time_seconds, ended at "
                        + "\(WireCoding.formatTimestamp(deadline))); submit it again with a longer limit"))
        }
        let limits = context.request.limits
        guard limits.lowSpeedBytesPerSecond > 0 else { return nil }
        let elapsed = Double(now &- context.stallWindow.start) / 1e9
        guard elapsed >= limits.lowSpeedTime else { return nil }
        // With helper connections, their bytes count too: the attempt may be waiting for them.
        let offset = context.attempt.offset + (context.segments?.bytesAhead ?? 0)
        let rate = Double(offset - context.stallWindow.offset) / elapsed
        context.stallWindow = (now, offset)
        guard rate < Double(limits.lowSpeedBytesPerSecond) else { return nil }
        return .transient(
            JobError(
                code: .tooSlow,
                message: "\(context.request.url.host ?? "the server") sent \(Int64(rate)) bytes/s over \(Int(elapsed)) s, "
                    + "below the low-speed limit of \(limits.lowSpeedBytesPerSecond) bytes/s (low_speed_bytes_per_second)"))
    }
}
