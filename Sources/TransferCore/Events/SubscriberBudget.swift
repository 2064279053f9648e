import CLinuxShims
import Foundation
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Bounds, in bytes, what waits in subscriber queues: per user and for the whole daemon. A
/// subscription whose next event does not fit is cut off (and told why), so subscribers that
/// never read cannot grow the daemon's memory however many connections they open.
public final class SubscriberBudget: Sendable {
    private struct State {
        var perUserLimit: Int
        var totalLimit: Int
        var byUser: [UInt32: Int] = [:]
        var total = 0
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - perUser: bytes the subscriptions of one uid may hold queued (`subscriber_queue_bytes_per_user`).
    ///   - total: bytes all subscriptions may hold queued (`subscriber_queue_bytes_total`).
    public init(perUser: Int, total: Int) {
        state = Mutex(State(perUserLimit: perUser, totalLimit: total))
    }

    /// Applies changed limits (on reload); what is queued stays until taken.
    public func setLimits(perUser: Int, total: Int) {
        state.withLock { state in
            state.perUserLimit = perUser
            state.totalLimit = total
        }
    }

    /// Bytes queued now, for one uid or for everyone.
    public func queued(for uid: UInt32? = nil) -> Int {
        state.withLock { state in uid.map { state.byUser[$0] ?? 0 } ?? state.total }
    }

    /// Takes `bytes` for `uid`, or says which limit they would cross.
    func reserve(_ bytes: Int, for uid: UInt32) -> SubscriptionEnd? {
        state.withLock { state in
            let mine = state.byUser[uid] ?? 0
            if mine + bytes > state.perUserLimit {
                return .overflowBytes(limit: state.perUserLimit, key: "subscriber_queue_bytes_per_user")
            }
            if state.total + bytes > state.totalLimit {
                return .overflowBytes(limit: state.totalLimit, key: "subscriber_queue_bytes_total")
            }
            state.byUser[uid] = mine + bytes
            state.total += bytes
            return nil
        }
    }

    /// Gives back bytes taken by `reserve`.
    func release(_ bytes: Int, for uid: UInt32) {
        guard bytes > 0 else { return }
        state.withLock { state in
            let left = (state.byUser[uid] ?? 0) - bytes
            state.byUser[uid] = left > 0 ? left : nil
            state.total = max(0, state.total - bytes)
        }
    }
}

/// Returns freed heap to the kernel after a large release (a cut-off subscriber's queue, a large
/// transfer, a burst of submits): glibc keeps freed memory in its arenas otherwise. One trim runs at
/// a time, on a thread of its own, once the latest call's delay has passed.
enum HeapTrim {
    private static let pending = Atomic<Bool>(false)
    /// When the trim is due: the latest of the calls' times plus their delays.
    private static let due = Atomic<UInt64>(0)

    /// Soon after a large release: 200 ms.
    static func soon() { after(nanoseconds: 200_000_000) }

    /// Once a second has passed without another call: after a burst of work rather than in its
    /// middle, where what the burst frees last would stay.
    static func whenQuiet() { after(nanoseconds: 1_000_000_000) }

    private static func after(nanoseconds delay: UInt64) {
        due.max(MonotonicClock.nanoseconds() &+ delay, ordering: .relaxed)
        guard pending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        Thread.detachNewThread {
            while true {
                let now = MonotonicClock.nanoseconds()
                let when = due.load(ordering: .relaxed)
                guard now < when else { break }
                usleep(UInt32(min((when - now) / 1000, 1_000_000)))
            }
            pending.store(false, ordering: .relaxed)
            _ = clinuxshims_malloc_trim(0)
        }
    }
}

extension JobEvent {
    /// A generous estimate of the memory one queued event holds: the value and its strings.
    var estimatedBytes: Int {
        let job = self.job
        let strings = job.id.utf8.count + job.url.utf8.count + job.destination.utf8.count
            + (job.error?.message.utf8.count ?? 0) + (job.finalUrl?.utf8.count ?? 0) + (job.session?.utf8.count ?? 0)
            + job.headerNames.reduce(0) { $0 + $1.utf8.count + 16 }
        return MemoryLayout<JobEvent>.stride + 256 + strings
    }
}
