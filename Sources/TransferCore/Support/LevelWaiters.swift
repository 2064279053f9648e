import Synchronization

/// One-shot work waiting for a level that one side lowers (a backlog) to come down to a mark:
/// whoever waits adds itself with `whenAtMost`, and the side that lowers the level calls
/// `levelFell` after each fall. Nothing looks at the level on a timer.
final class LevelWaiters: Sendable {
    private let waiters = Mutex<[(mark: Int, resume: @Sendable () -> Void)]>([])
    /// Whether anyone may wait, so that the lowering side skips the lock when nobody does. Set
    /// before the level is read when adding, read after the level falls (both sequentially
    /// consistent): a fall between the two cannot go unseen.
    private let anyWaiting = Atomic<Bool>(false)

    /// Runs `resume` once `level()` is at most `mark`: at once, on the caller's thread, when it is
    /// already; else on the lowering side's thread, right after the fall that brings it there.
    func whenAtMost(_ mark: Int, level: () -> Int, _ resume: @escaping @Sendable () -> Void) {
        let now: Bool = waiters.withLock { waiters in
            anyWaiting.store(true, ordering: .sequentiallyConsistent)
            if level() <= mark { return true }
            waiters.append((mark, resume))
            return false
        }
        if now { resume() }
    }

    /// Runs the waiters whose mark the level, read now, has come down to, in the order they came.
    func levelFell(to level: () -> Int) {
        guard anyWaiting.load(ordering: .sequentiallyConsistent) else { return }
        let due: [@Sendable () -> Void] = waiters.withLock { waiters in
            let now = level()
            let due = waiters.filter { now <= $0.mark }.map(\.resume)
            if !due.isEmpty { waiters.removeAll { now <= $0.mark } }
            if waiters.isEmpty { anyWaiting.store(false, ordering: .sequentiallyConsistent) }
            return due
        }
        for resume in due { resume() }
    }
}
