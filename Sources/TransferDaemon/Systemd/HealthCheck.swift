import Synchronization
import TransferCore

/// Whether the parts the daemon cannot work without still answer: the core (its actor takes a call)
/// and the journal (its writer, behind whatever it is writing, gets to a sync).
final class HealthCheck: Sendable {
    enum Outcome: Sendable, Equatable {
        case healthy
        case unhealthy(String)
    }

    private let manager: TransferManager
    private let journal: Journal
    /// A probe that outlived its check. The next check waits on it rather than starting another,
    /// so a hung disk costs one stuck probe, not one per check.
    private let pending = Mutex<Task<Void, any Error>?>(nil)
    /// What the probe waits on right now, for the message.
    private let waitingOn = Mutex("the core")

    init(manager: TransferManager, journal: Journal) {
        self.manager = manager
        self.journal = journal
    }

    /// Probes the core and the journal, giving them `limit` to answer.
    func check(within limit: Duration) async -> Outcome {
        let probe = pending.withLock { pending in
            if let pending { return pending }
            let probe = Task { try await self.probe() }
            pending = probe
            return probe
        }
        guard let result = await waitForResult(of: probe, within: limit) else {
            return .unhealthy("\(waitingOn.withLock { $0 }) did not answer within \(limit)")
        }
        pending.withLock { pending in
            if pending == probe { pending = nil }
        }
        switch result {
        case .success: return .healthy
        case .failure(let error): return .unhealthy("the journal failed: \(error)")
        }
    }

    private func probe() async throws {
        waitingOn.withLock { $0 = "the core" }
        _ = await manager.counts
        waitingOn.withLock { $0 = "the journal" }
        do {
            try await journal.sync()
        } catch let error as JournalError where error.code == .noSpace {
            // The writer answered: a full disk refuses new work, it does not make the daemon one
            // for the watchdog to restart (a restart would not free any space).
        }
    }
}
