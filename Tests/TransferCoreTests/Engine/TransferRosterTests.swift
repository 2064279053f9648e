import Synchronization
import Testing
@testable import TransferCore

/// The roster both runners keep: what a stop, a cancel or shutdown finds while a job starts and
/// once it runs, and when the engine is idle.
@Suite("Transfer roster")
struct TransferRosterTests {
    final class Transfer: Sendable {
        let id: String
        init(_ id: String) { self.id = id }
    }

    @Test("a job with no stop runs, and a stop then finds its transfer")
    func runs() {
        let roster = TransferRoster<Transfer>()
        roster.beginStarting("a")
        guard case .run(let transfer) = roster.admit("a", make: { Transfer("a") }) else {
            Issue.record("not admitted")
            return
        }
        #expect(roster.claim("a", for: .pause)?.map(\.id) == "a")
        #expect(roster.running.map(\.id) == ["a"])
        #expect(roster.context(forJob: "a") === transfer)
        #expect(roster.claim("b", for: .pause) == nil)
    }

    @Test("a stop while it starts is kept for admit, and it does not run", arguments: [StopReason.pause, .yield, .cancel, .shutdown])
    func stoppedWhileStarting(reason: StopReason) {
        let roster = TransferRoster<Transfer>()
        roster.beginStarting("a")
        let claimed = roster.claim("a", for: reason)
        #expect(claimed != nil && claimed?.map(\.id) == nil)
        var made = false
        guard case .stoppedBeforeStart(let answered) = roster.admit("a", make: { made = true; return Transfer("a") }) else {
            Issue.record("admitted")
            return
        }
        #expect(answered == reason)
        #expect(!made)
        #expect(roster.running.isEmpty)
    }

    @Test("a cancel while it starts stands: a later stop finds nothing, a later cancel is answered again")
    func cancelStands() {
        let roster = TransferRoster<Transfer>()
        roster.beginStarting("a")
        _ = roster.claim("a", for: .cancel)
        #expect(roster.claim("a", for: .pause) == nil)
        #expect(roster.claim("a", for: .cancel) != nil)
        guard case .stoppedBeforeStart(.cancel) = roster.admit("a", make: { Transfer("a") }) else {
            Issue.record("the cancel was replaced")
            return
        }
    }

    @Test("a cancel replaces a pause that came while it started")
    func cancelReplacesPause() {
        let roster = TransferRoster<Transfer>()
        roster.beginStarting("a")
        _ = roster.claim("a", for: .pause)
        _ = roster.claim("a", for: .cancel)
        #expect(roster.admitRunning("a", Transfer("a")) == .cancel)
        #expect(roster.running.count == 1)
    }

    @Test("after stopping everything, a job that finishes starting does not run, or runs to stop at once")
    func stoppingAll() {
        let roster = TransferRoster<Transfer>()
        roster.beginStarting("a")
        roster.beginStarting("b")
        #expect(roster.beginStoppingAll().isEmpty)
        guard case .stoppingAll = roster.admit("a", make: { Transfer("a") }) else {
            Issue.record("admitted while stopping all")
            return
        }
        #expect(roster.admitRunning("b", Transfer("b")) == .shutdown)
        // A start that failed reports its failure, not a stop.
        roster.beginStarting("c")
        guard case .none = roster.admit("c", stopsWhenStoppingAll: false, make: { nil }) else {
            Issue.record("a failed start was answered as stopped")
            return
        }
    }

    @Test("a job admit does not let run keeps the roster busy until its end was reported (remove)")
    func notAdmittedStaysUntilRemoved() async {
        let roster = TransferRoster<Transfer>()
        roster.beginStarting("a")
        _ = roster.claim("a", for: .pause)
        guard case .stoppedBeforeStart(.pause) = roster.admit("a", make: { Transfer("a") }) else {
            Issue.record("admitted")
            return
        }
        let idle = Mutex(false)
        let waiter = Task {
            await roster.waitUntilIdle()
            idle.withLock { $0 = true }
        }
        await Task.yield()
        #expect(!idle.withLock { $0 })
        roster.remove("a")
        await waiter.value
        #expect(idle.withLock { $0 })
    }

    @Test("waitUntilIdle returns once the last running or starting transfer is removed")
    func idle() async {
        let roster = TransferRoster<Transfer>()
        await roster.waitUntilIdle()
        roster.beginStarting("a")
        roster.beginStarting("b")
        _ = roster.admit("a", make: { Transfer("a") })
        async let waited: Void = roster.waitUntilIdle()
        roster.remove("a")
        _ = roster.admitRunning("b", Transfer("b"))
        roster.remove("b")
        await waited
        #expect(roster.running.isEmpty)
    }
}
