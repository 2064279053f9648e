import Metrics
import Synchronization
public import TransferProtocol

/// Gathers one user's submits into the manager's batch path, as a JSON-RPC batch would be:
/// each submit's checks that may wait (host rules, which may resolve a name; the filesystem) run
/// on their own, side by side (`TransferManager.check`), so a slow name or a hung mount holds up
/// only the submits that name it. What passed them is then accepted (`TransferManager.accept`):
/// the first at once, alone; those that pass while it is accepted wait and then go together,
/// their records written and synced as one, answered together.
///
/// A script that pipelines submits (`transferctl submit -i`, a client keeping many in flight)
/// gets this without sending batches. Each submit is answered as it would be alone, in its
/// connection's order, except that the journal's space is checked once for the whole batch.
public final class SubmitCoalescer: Sendable {
    /// Submits of one user and group are gathered; different users' go side by side.
    private struct Submitter: Hashable {
        var uid: UInt32
        var gid: UInt32?
    }

    private struct Waiting {
        var submit: CheckedSubmit
        var answer: CheckedContinuation<Result<Job, CoreError>, Never>
    }

    private struct State {
        /// Submits waiting for the batch before theirs, by submitter.
        var waiting: [Submitter: [Waiting]] = [:]
        /// Submitters whose batch is being accepted.
        var running: Set<Submitter> = []
    }

    /// At most this many submits go in one batch; more wait for the next.
    static let maxBatch = 256

    private let manager: TransferManager
    private let state = Mutex(State())

    public init(manager: TransferManager) {
        self.manager = manager
    }

    /// Checks and accepts `params` for `owner`, in a batch with the submits that wait beside it.
    public func submit(_ params: Submit.Params, owner: UInt32, group: UInt32? = nil) async -> Result<Job, CoreError> {
        let startedAt = MonotonicClock.nanoseconds()
        defer { manager.metrics.submitDuration.recordNanoseconds(MonotonicClock.nanoseconds() &- startedAt) }
        guard let checked = await manager.check([params], owner: owner, group: group).first else {
            return .failure(CoreError(.internalFailure, "the submit produced no answer"))
        }
        let submitter = Submitter(uid: owner, gid: group)
        return await withCheckedContinuation { answer in
            let starts = state.withLock { state in
                state.waiting[submitter, default: []].append(Waiting(submit: checked, answer: answer))
                return state.running.insert(submitter).inserted
            }
            if starts { Task { await self.run(submitter) } }
        }
    }

    /// Accepts the submitter's waiting submits, a batch at a time, until none wait.
    private func run(_ submitter: Submitter) async {
        while true {
            let batch: [Waiting] = state.withLock { state in
                guard var waiting = state.waiting.removeValue(forKey: submitter), !waiting.isEmpty else {
                    state.running.remove(submitter)
                    return []
                }
                if waiting.count <= Self.maxBatch { return waiting }
                let taken = Array(waiting.prefix(Self.maxBatch))
                waiting.removeFirst(Self.maxBatch)
                state.waiting[submitter] = waiting
                return taken
            }
            guard !batch.isEmpty else { return }
            let results = await manager.accept(batch.map(\.submit), owner: submitter.uid, group: submitter.gid)
            for (index, waiting) in batch.enumerated() {
                let result =
                    index < results.count ? results[index] : .failure(CoreError(.internalFailure, "the submit produced no answer"))
                waiting.answer.resume(returning: result)
            }
        }
    }
}
