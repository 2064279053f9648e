import Foundation
import TransferProtocol

/// Once a second, on the delegate queue: fails transfers past their job's deadline and
/// interrupts those slower than their low-speed limit over its whole window; uploads as well
/// (see `LimitsMonitor+Uploads.swift`).
///
/// `@unchecked Sendable`: the timer is set up in init and only cancelled after.
final class LimitsMonitor: @unchecked Sendable {
    private let ticker: any DispatchSourceTimer

    init(runner: DownloadRunner, uploads: UploadRunner) {
        ticker = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.engine.limits"))
        ticker.schedule(deadline: .now() + 1, repeating: 1)
        ticker.setEventHandler { [weak runner, weak uploads] in
            guard let runner, let uploads else { return }
            runner.queues.onDelegate {
                let now = MonotonicClock.nanoseconds()
                let wallClock = Date()
                Self.check(runner, now: now, wallClock: wallClock)
                Self.check(uploads, now: now, wallClock: wallClock)
            }
        }
        ticker.resume()
    }

    deinit {
        ticker.cancel()
    }

    static func check(_ runner: DownloadRunner, now: UInt64, wallClock: Date) {
        runner.queues.assertOnDelegate()
        for context in runner.registry.roster.running where !context.machine.attempt.isOver && !context.machine.attempt.hasFailed && context.machine.state == .fetching {
            guard let failure = exceeded(context, now: now, wallClock: wallClock) else { continue }
            runner.perform(context.machine.attempt.failed(failure), context)
            // Between requests nothing else ends the attempt: its wait does, now.
            context.wakeup.wake()
        }
    }

    /// The limit a transfer exceeds, if any; restarts its low-speed window when that is over.
    private static func exceeded(_ context: DownloadContext, now: UInt64, wallClock: Date) -> TransferFailure? {
        if let deadline = context.request.deadline, wallClock >= deadline { return outOfTime(deadline) }
        let limits = context.request.limits
        // With helper connections, their bytes count too: the attempt may be waiting for them.
        let offset = context.machine.progress
        if offset != context.machine.lastProgress.offset {
            context.machine.lastProgress = (now, offset)
        } else if let idle = idleFailure(since: context.machine.lastProgress.time, now: now, idleTimeout: limits.idleTimeout, host: context.request.url.host) {
            return idle
        }
        guard limits.lowSpeedBytesPerSecond > 0 else { return nil }
        let elapsed = MonotonicClock.seconds(from: context.machine.stallWindow.start, to: now)
        guard elapsed >= limits.lowSpeedTime else { return nil }
        let rate = Double(offset - context.machine.stallWindow.offset) / elapsed
        context.machine.stallWindow = (now, offset)
        guard rate < Double(limits.lowSpeedBytesPerSecond) else { return nil }
        return tooSlow(context.request, rate: rate, elapsed: elapsed, verb: "sent")
    }

    /// Past FoundationNetworking's own idle timer, with some grace: a request that waits for
    /// something that never comes (an answer to a login challenge the session cannot give, say)
    /// fails as `timeout`, and is retried, instead of leaving the job running for ever.
    static func idleFailure(since: UInt64, now: UInt64, idleTimeout: Double, host: String?) -> TransferFailure? {
        let grace = 5.0
        let idle = MonotonicClock.seconds(from: since, to: now)
        guard idleTimeout > 0, idle >= idleTimeout + grace else { return nil }
        return .transient(
            JobError(
                code: .timeout,
                message: "\(host ?? "the server") sent nothing for \(Int(idle)) s (the idle timeout, idle_timeout_seconds)"))
    }

    /// The failure of a transfer past its deadline or maximum time: final.
    static func outOfTime(_ deadline: Date) -> TransferFailure {
        .permanent(
            JobError(
                code: .timeLimit,
                message: "the job ran out of time (its maximum time, max_time_seconds, ended at "
                    + "\(WireCoding.formatTimestamp(deadline))); submit it again with a longer limit"))
    }

    /// The failure of a transfer below its low-speed limit: another attempt may go faster.
    static func tooSlow(_ request: TransferRequest, rate: Double, elapsed: Double, verb: String) -> TransferFailure {
        .transient(
            JobError(
                code: .tooSlow,
                message: "\(request.url.host ?? "the server") \(verb) \(Int64(rate)) bytes/s over \(Int(elapsed)) s, "
                    + "below the low-speed limit of \(request.limits.lowSpeedBytesPerSecond) bytes/s (low_speed_bytes_per_second)"))
    }
}
