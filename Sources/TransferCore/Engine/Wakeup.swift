import Dispatch

/// A transfer's wait between its requests, ended once by whichever comes first: the timer armed
/// for the time the wait names (its pace), or an early wake by the event it waits for — a stop, a
/// failure decided meanwhile, a rate limit lifted or raised, a helper connection's part. The wait
/// computes its time once; nothing looks at the transfer again until one of these happens.
///
/// `@unchecked Sendable`: `parked` and `generation` are read and written only on the engine's
/// delegate queue; other threads ask for a wake with `wake(_:)`, which hops there.
final class Wakeup: @unchecked Sendable {
    /// What a transfer waits for.
    enum Reason: Sendable {
        /// The time its rate limit lets the next request go out.
        case paced
        /// A helper connection to finish (or give up) the part the attempt has reached.
        case part
    }

    private struct Parked {
        let reason: Reason
        let resume: @Sendable () -> Void
        let timer: DispatchWorkItem?
    }

    private let queues: EngineQueues
    private var parked: Parked?
    /// Bumped by each wait, so that the timer of an earlier one, already on its way, does nothing.
    private var generation: UInt64 = 0

    init(queues: EngineQueues) {
        self.queues = queues
    }

    /// Whether the transfer waits for `reason` now. On the delegate queue only; not checked here,
    /// as a helper's every chunk asks.
    func isWaiting(for reason: Reason) -> Bool {
        parked?.reason == reason
    }

    /// Waits for `reason`: `resume` runs on the delegate queue once, at `deadline` (the monotonic
    /// clock's nanoseconds) when one is given, or earlier when woken. A transfer waits for one
    /// thing at a time.
    func park(_ reason: Reason, until deadline: UInt64?, _ resume: @escaping @Sendable () -> Void) {
        queues.assertOnDelegate()
        generation &+= 1
        let generation = generation
        var timer: DispatchWorkItem?
        if let deadline {
            let now = MonotonicClock.nanoseconds()
            let item = DispatchWorkItem { self.queues.onDelegate { self.timerFired(generation) } }
            let delay = deadline > now ? min(deadline - now, UInt64(Int.max)) : 0
            queues.io.asyncAfter(deadline: .now() + .nanoseconds(Int(delay)), execute: item)
            timer = item
        }
        parked?.timer?.cancel()
        parked = Parked(reason: reason, resume: resume, timer: timer)
    }

    /// Ends the wait now, from any thread, if it is for one of `reasons` (nil: whatever it is for).
    /// Does nothing when the transfer does not wait (any more).
    func wake(_ reasons: Set<Reason>? = nil) {
        queues.onDelegateFirst {
            guard let parked = self.parked, reasons?.contains(parked.reason) != false else { return }
            self.parked = nil
            parked.timer?.cancel()
            parked.resume()
        }
    }

    private func timerFired(_ generation: UInt64) {
        guard generation == self.generation, let parked else { return }
        self.parked = nil
        parked.resume()
    }
}
