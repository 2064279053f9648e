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

/// Returns freed heap to the kernel after a large release (a cut-off subscriber's queue), at most
/// once a second: glibc keeps freed memory in its arenas otherwise.
enum HeapTrim {
    private static let pending = Atomic<Bool>(false)

    static func soon() {
        guard pending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        Thread.detachNewThread {
            usleep(200_000)
            pending.store(false, ordering: .relaxed)
            _ = clinuxshims_malloc_trim(0)
        }
    }

    private static let quietPending = Atomic<Bool>(false)
    private static let lastQuietCall = Atomic<UInt64>(0)
    static let quietNanoseconds: UInt64 = 1_000_000_000

    /// Returns freed heap once a second has passed without another call: after a burst of work
    /// rather than in its middle, where what the burst frees last would stay.
    static func whenQuiet() {
        lastQuietCall.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
        guard quietPending.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        Thread.detachNewThread {
            while true {
                let due = lastQuietCall.load(ordering: .relaxed) &+ quietNanoseconds
                let now = MonotonicClock.nanoseconds()
                guard now < due else { break }
                usleep(UInt32(min((due - now) / 1000, 1_000_000)))
            }
            quietPending.store(false, ordering: .relaxed)
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
