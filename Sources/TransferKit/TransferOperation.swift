public import Foundation
import Synchronization

/// An `Operation` that runs one task and finishes when the task ends, for queue-based code
/// (dependencies, `maxConcurrentOperationCount`). Cancelling the operation cancels the task.
public final class TransferOperation: Operation, @unchecked Sendable {
    // @unchecked: the only mutable state, `phase`, is behind a mutex; KVO notifications are sent
    // around its changes as `Operation` requires.
    private enum Phase { case ready, executing, finished }

    /// The task the operation runs.
    public let task: TransferTask
    private let phase = Mutex(Phase.ready)

    public init(task: TransferTask) {
        self.task = task
    }

    public override var isAsynchronous: Bool { true }
    public override var isExecuting: Bool { phase.withLock { $0 == .executing } }
    public override var isFinished: Bool { phase.withLock { $0 == .finished } }

    public override func start() {
        guard !isCancelled, let session = task.session else {
            finish()
            return
        }
        willChangeValue(forKey: "isExecuting")
        phase.withLock { $0 = .executing }
        didChangeValue(forKey: "isExecuting")
        session.whenEnded(task) { [weak self] _ in self?.finish() }
        task.resume()
    }

    public override func cancel() {
        super.cancel()
        if isExecuting { task.cancel() }
    }

    private func finish() {
        let wasFinished = phase.withLock { $0 == .finished }
        guard !wasFinished else { return }
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        phase.withLock { $0 = .finished }
        didChangeValue(forKey: "isFinished")
        didChangeValue(forKey: "isExecuting")
    }
}
