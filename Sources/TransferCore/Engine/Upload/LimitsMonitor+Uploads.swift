import Foundation
import TransferProtocol

/// The same limits for uploads as for downloads: the job's deadline and maximum time, and the
/// low-speed limit, counted in bytes the server took. A server that takes the body slowly would
/// otherwise hold an upload for as long as it keeps taking a little. (The idle timeout needs
/// nothing here: FoundationNetworking's request timer already ends a request during which nothing
/// went out or came in.)
extension LimitsMonitor {
    static func check(_ uploads: UploadRunner, now: UInt64, wallClock: Date) {
        uploads.queues.assertOnDelegate()
        for context in uploads.running where context.machine.isRunning {
            guard let failure = exceeded(context, now: now, wallClock: wallClock) else { continue }
            // An input to the machine: the request in flight is cancelled and its end reports the
            // failure, or the upload ends at once between requests.
            uploads.feed(.fail(failure), context)
        }
    }

    /// The limit an upload exceeds, if any; restarts its low-speed window when that is over.
    static func exceeded(_ context: UploadContext, now: UInt64, wallClock: Date) -> TransferFailure? {
        let request = context.request
        if let deadline = request.deadline, wallClock >= deadline { return outOfTime(deadline) }
        guard request.limits.lowSpeedBytesPerSecond > 0 else { return nil }
        let bytes = context.bytesSoFar
        guard let window = context.machine.stallWindow else {
            context.machine.stallWindow = (now, bytes)
            return nil
        }
        let elapsed = MonotonicClock.seconds(from: window.start, to: now)
        guard elapsed >= request.limits.lowSpeedTime else { return nil }
        let rate = Double(bytes - window.bytes) / elapsed
        context.machine.stallWindow = (now, bytes)
        guard rate < Double(request.limits.lowSpeedBytesPerSecond) else { return nil }
        return tooSlow(request, rate: rate, elapsed: elapsed, verb: "took")
    }
}
