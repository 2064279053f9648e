import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One running transfer inside the engine: its request, its attempt's decisions, its partial
/// file, and how other threads may stop it.
///
/// `@unchecked Sendable`: `machine`, `stallWindow` and `pacer` are read and written only on the engine's
/// delegate queue (`wakeup` checks that itself); what other threads read or change is in `control` (locked) or in the sink's atomics.
final class DownloadContext: @unchecked Sendable {
    /// Why the transfer is not simply running.
    enum Phase: Hashable {
        case active
        /// Back-pressure, not a user's pause: its request was cancelled to let the delegate queue
        /// (and the disk) catch up; it continues with a ranged request once they have.
        case backedUp
        /// Cancelled by the user: the partial file is removed.
        case cancelling
        /// Stopped by the core (a user's pause, a background job's yield, shutdown), which
        /// `.stopped` reports: the partial file is synced and kept.
        case stopping(StopReason)
        /// Moving the file into place: it can no longer be cancelled.
        case landing

        /// Whether the transfer goes on: fetching, or held back until the backlog drains.
        var isUnderWay: Bool { self == .active || self == .backedUp }
    }

    struct Control {
        var phase: Phase = .active
        var task: URLSessionDataTask?
        /// The requests of the helper connections of a download over several (`HelperConnections`).
        var helperTasks: [Int: URLSessionDataTask] = [:]

        /// Cancels the attempt's request and every helper's.
        func cancelTasks() {
            task?.cancel()
            for helper in helperTasks.values { helper.cancel() }
        }
    }

    let request: TransferRequest
    let control = Mutex(Control())
    /// What the attempt and its helper connections decided so far.
    var machine: DownloadMachine
    let sink: ByteSink
    /// The start of the window the low-speed limit measures: a time and the offset then.
    var stallWindow: (start: UInt64, offset: Int64)
    /// When the transfer last got further (or sent a request), and its offset then: the idle limit
    /// the limits monitor holds, whatever FoundationNetworking's own timer does.
    var lastProgress: (time: UInt64, offset: Int64)
    /// Spaces the segments to the transfer's rate limit.
    var pacer = RatePacer()
    /// Set once the server showed it ignores ranges: then a rate limit cannot be held.
    let rangesUnusable = Atomic<Bool>(false)
    /// A conditional download's validators from the server, stamped on the landed file.
    var stamp: ConditionalGet.Stamp?
    /// The attempt's wait between requests: for its pace, or for a helper's part.
    let wakeup: Wakeup

    init(request: TransferRequest, machine: DownloadMachine, sink: ByteSink, queues: EngineQueues) {
        self.request = request
        self.machine = machine
        self.sink = sink
        self.wakeup = Wakeup(queues: queues)
        self.stallWindow = (MonotonicClock.nanoseconds(), machine.attempt.offset)
        self.lastProgress = (stallWindow.start, stallWindow.offset)
    }

    var phase: Phase { control.withLock { $0.phase } }

    /// Moves from one phase to another, if the transfer is in one of `from`; returns whether it did.
    func move(from: Set<Phase>, to phase: Phase, cancellingTask: Bool = false) -> Bool {
        control.withLock { control in
            guard from.contains(control.phase) else { return false }
            control.phase = phase
            // Pausing while the disk catches up stops the attempt's request only: the helpers'
            // bytes go to the disk directly, and a cancelled request loses what is on its way.
            if cancellingTask { phase == .backedUp ? control.task?.cancel() : control.cancelTasks() }
            return true
        }
    }

    /// Cancels the request out, if the transfer is active.
    func cancelRequest() {
        control.withLock { control in
            if control.phase == .active { control.task?.cancel() }
        }
    }
}
