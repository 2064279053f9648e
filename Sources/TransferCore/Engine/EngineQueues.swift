import Dispatch
import Foundation
import Logging
import Synchronization

/// The queues the engine's parts run on. Each part checks at run time that it is on its own:
///
/// - the delegate queue (serial): URLSession's callbacks and every decision about a transfer, one
///   at a time, so a transfer's state needs no lock there;
/// - the I/O queue (concurrent): what blocks — opening destinations, reading a prefix to hash,
///   resolving names for the host rules, syncing partial files;
/// - the landing threads (`LandingThreads`): landings, whose syncs run side by side.
///
/// `@unchecked Sendable`: both queues are thread-safe; the references never change.
final class EngineQueues: @unchecked Sendable {
    /// URLSession's delegate queue (serial). Not given an `underlyingQueue`: with one, the
    /// OperationQueue hands operations on as they are added, so its count no longer shows the
    /// backlog that back-pressure relies on (measured: 196 MiB peak instead of 109 for 1 GiB).
    let delegate: DelegateQueue
    let io = DispatchQueue(label: "transferd.engine.io", attributes: .concurrent)
    let landings: LandingThreads

    init(logger: Logger = LandingThreads.silent) {
        landings = LandingThreads(logger: logger)
        delegate = DelegateQueue()
        delegate.name = "transferd.engine.delegate"
        delegate.maxConcurrentOperationCount = 1
    }

    /// Runs `work` on the delegate queue, after what is queued there.
    func onDelegate(_ work: @escaping @Sendable () -> Void) {
        delegate.addOperation(work)
    }

    /// Runs `work` on the delegate queue before the operations that wait there at normal priority
    /// (received chunks, say): a cancel or a stop from the core, and the end of a wait, do not
    /// wait behind the backlog. Operations of the same priority keep their order.
    func onDelegateFirst(_ work: @escaping @Sendable () -> Void) {
        delegate.addUrgentOperation(work)
    }

    /// Runs `work` on the I/O queue.
    func onIO(_ work: @escaping @Sendable () -> Void) {
        io.async(execute: work)
    }

    /// Runs `work` on a landing thread.
    func onLanding(_ work: @escaping @Sendable () -> Void) {
        landings.run(work)
    }

    /// A received body reaches the delegate queue in operations of at most 256 KiB (libcurl's
    /// 16 KiB writes gathered by CLinuxShims' curl_coalesce.c, what one socket read brings): the
    /// backlog counts each as sixteen units of 16 KiB, the unit of the digest's backlog and of the
    /// marks (`EngineConfiguration.backlogHighWater`), so that the marks bound the bytes waiting.
    static let unitsPerOperation = 16

    /// Operations waiting on the delegate queue, in 16 KiB units (`unitsPerOperation`): received
    /// chunks pile up there when the disk is slow.
    var delegateBacklog: Int { delegate.operationCount * Self.unitsPerOperation }

    /// Runs `resume` on the delegate queue once its backlog is down to `lowWater` (counting the
    /// operation that ends then, as `delegateBacklog` read on the queue does). The backlog only
    /// falls when an operation ends, so that is where waiters are looked at: no timer.
    func whenBacklog(atMost lowWater: Int, _ resume: @escaping @Sendable () -> Void) {
        assertOnDelegate()
        // An operation counts itself while it runs, so a mark below 1 would never be reached.
        delegate.backlogWaiters.whenAtMost(max(lowWater / Self.unitsPerOperation, 1), level: { delegate.operationCount }, resume)
    }

    func assertOnDelegate() {
        precondition(OperationQueue.current === delegate, "expected to run on the engine's delegate queue")
    }

    func assertOnIO() {
        dispatchPrecondition(condition: .onQueue(io))
    }

    func assertOnLanding() {
        precondition(LandingThreads.isCurrent, "expected to run on a landing thread")
    }
}

/// The engine's delegate queue: an `OperationQueue` that, at the end of each operation and still
/// on the queue, runs the work waiting for its backlog to come down (`backlogWaiters`). Every
/// operation comes through `addOperation(_:)` with a closure: URLSession's callbacks
/// (FoundationNetworking queues each so) and the engine's own work.
///
/// `@unchecked Sendable`: an `OperationQueue` is thread-safe; `backlogWaiters` is `Sendable`.
final class DelegateQueue: OperationQueue, @unchecked Sendable {
    let backlogWaiters = LevelWaiters()

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        super.addOperation {
            block()
            self.backlogWaiters.levelFell(to: { self.operationCount })
        }
    }

    /// As `addOperation(_:)`, at a priority that runs it before every operation waiting at normal priority.
    func addUrgentOperation(_ block: @escaping @Sendable () -> Void) {
        let operation = BlockOperation {
            block()
            self.backlogWaiters.levelFell(to: { self.operationCount })
        }
        operation.queuePriority = .veryHigh
        super.addOperation(operation)
    }
}
