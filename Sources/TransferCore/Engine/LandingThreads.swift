import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// The threads landings run on. A landing blocks in `fsync` twice (its file, then its directory),
/// and syncs that run at the same time share the filesystem's journal commits: on ext4 here, 300
/// files synced, renamed and their directory synced took 1.1 s two at a time and 0.19 s sixteen
/// at a time. GCD on Linux runs about as many blocking items of a concurrent queue at once as the
/// machine has cores, so landings queued behind each other there (and the preparations of the
/// next transfers behind them). Here each landing waiting gets a thread: up to `limit`, made when
/// work waits and no thread is idle, ending after `idleSeconds` without work.
///
/// A thread the system refuses (out of threads, or a unit's `TasksMax`) is tried again: at once by
/// the next landing, and after a pause when no landing thread is alive to take the waiting work.
///
/// `@unchecked Sendable`: `pending`, `idle` and `threads` are read and changed only while
/// `condition` is locked; the rest never changes.
final class LandingThreads: @unchecked Sendable {
    /// At most this many landings run at once; more wait for a thread.
    let limit: Int
    /// A thread without work this long ends.
    let idleSeconds: Double
    /// Starts a thread running its argument; false when the system refuses one.
    typealias Starter = @Sendable (@escaping @Sendable () -> Void) -> Bool
    private let start: Starter
    private let logger: Logger
    private let condition = NSCondition()
    private var pending: [@Sendable () -> Void] = []
    private var idle = 0
    private var threads = 0
    /// Whether a refusal was logged and no thread has started since: one line per stretch.
    private var refusalLogged = false

    /// Set (non-nil) on the landing threads only, by which `isCurrent` knows them.
    private static let marker: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    /// A logger that drops everything, for threads made without one (tests).
    static let silent = Logger(label: "transferd.engine", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A landing reads, hashes at most a prefix buffer and syncs: a small stack does.
    static let stackBytes = 1 << 20

    init(
        limit: Int = 16, idleSeconds: Double = 5,
        logger: Logger = LandingThreads.silent,
        start: @escaping Starter = { CheckedThread.start(stackBytes: LandingThreads.stackBytes, $0) }
    ) {
        self.limit = max(limit, 1)
        self.idleSeconds = idleSeconds
        self.logger = logger
        self.start = start
    }

    /// Runs `work` on a landing thread, at once when one is idle or may be made.
    func run(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        pending.append(work)
        let spawn = pending.count > idle && threads < limit
        if spawn { threads += 1 }
        condition.signal()
        condition.unlock()
        if spawn { startThread(retryAfter: 0.05) }
    }

    /// Starts a thread already counted in `threads`. When the system refuses it, the count drops
    /// again, unless no landing thread is alive: then nobody would take the waiting work, so the
    /// thread stays counted and is tried again after `retryAfter` seconds, twice as long each time
    /// up to a second.
    private func startThread(retryAfter delay: Double) {
        if start({ self.serve() }) {
            condition.lock()
            refusalLogged = false
            condition.unlock()
            return
        }
        condition.lock()
        let orphaned = threads == 1 && !pending.isEmpty
        if !orphaned { threads -= 1 }
        let log = orphaned && !refusalLogged
        if log { refusalLogged = true }
        let waiting = pending.count
        condition.unlock()
        if log {
            logger.warning(
                "the system refused a thread for landing downloads; trying again, the finished downloads wait meanwhile: raise the unit's TasksMax or the user's process limit (ulimit -u)",
                metadata: ["waiting": "\(waiting)"])
        }
        guard orphaned else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            self.startThread(retryAfter: min(delay * 2, 1))
        }
    }

    /// Whether the calling thread is a landing thread.
    static var isCurrent: Bool { pthread_getspecific(marker) != nil }

    /// A thread's life: take work while there is some, wait for more, end after a while without.
    private func serve() {
        pthread_setspecific(Self.marker, UnsafeRawPointer(bitPattern: 1))
        condition.lock()
        while true {
            while pending.isEmpty {
                idle += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleSeconds))
                idle -= 1
                if !signalled && pending.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let work = pending.removeFirst()
            condition.unlock()
            work()
            condition.lock()
        }
    }
}
