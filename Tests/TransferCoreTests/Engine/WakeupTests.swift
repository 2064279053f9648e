import Foundation
import Synchronization
import Testing
@testable import TransferCore

/// The engine's waits, one part at a time: a transfer's wait ends once, by its timer or earlier
/// by a wake; the delegate queue's backlog waiters run when the backlog falls to their mark; the
/// digest's when hashing brings its backlog under theirs.
@Suite("Wake-ups")
struct WakeupTests {
    /// Runs `body` on the engine's delegate queue.
    private func onDelegate(_ queues: EngineQueues, _ body: @escaping @Sendable () -> Void) {
        queues.onDelegate(body)
    }

    @Test func aWakeEndsTheWaitBeforeItsTimerAndOnlyOnce() async throws {
        let queues = EngineQueues()
        let wakeup = Wakeup(queues: queues)
        let resumed = Atomic<Int>(0)
        let later = Atomic<Bool>(false)
        onDelegate(queues) {
            // A timer a minute away: only the wake can end this in time.
            wakeup.park(.paced, until: MonotonicClock.nanoseconds() + 60_000_000_000) { resumed.add(1, ordering: .relaxed) }
        }
        wakeup.wake()
        try await eventually("the wake") { resumed.load(ordering: .relaxed) == 1 }
        // A wake of a transfer that no longer waits does nothing.
        wakeup.wake()
        onDelegate(queues) {
            wakeup.park(.paced, until: MonotonicClock.nanoseconds() + 20_000_000) { later.store(true, ordering: .relaxed) }
        }
        try await eventually("the second wait's timer") { later.load(ordering: .relaxed) }
        #expect(resumed.load(ordering: .relaxed) == 1)
    }

    @Test func aTimerEndsTheWaitOnceAndALateWakeDoesNothing() async throws {
        let queues = EngineQueues()
        let wakeup = Wakeup(queues: queues)
        let resumed = Atomic<Int>(0)
        onDelegate(queues) {
            wakeup.park(.part, until: MonotonicClock.nanoseconds() + 10_000_000) { resumed.add(1, ordering: .relaxed) }
        }
        try await eventually("the timer") { resumed.load(ordering: .relaxed) == 1 }
        wakeup.wake()
        let marker = Atomic<Bool>(false)
        // The wake above hopped to the delegate queue before this: once this ran, so did that.
        onDelegate(queues) { marker.store(true, ordering: .relaxed) }
        try await eventually("the queue to turn") { marker.load(ordering: .relaxed) }
        #expect(resumed.load(ordering: .relaxed) == 1)
    }

    @Test func aWakeForAnotherReasonLeavesTheWaitAlone() async throws {
        let queues = EngineQueues()
        let wakeup = Wakeup(queues: queues)
        let resumed = Atomic<Int>(0)
        onDelegate(queues) { wakeup.park(.part, until: nil) { resumed.add(1, ordering: .relaxed) } }
        // A rate change wakes transfers waiting for their pace only.
        wakeup.wake([.paced])
        let waiting = Atomic<Bool>(false)
        onDelegate(queues) { waiting.store(wakeup.isWaiting(for: .part), ordering: .relaxed) }
        try await eventually("the queue to turn") { waiting.load(ordering: .relaxed) }
        #expect(resumed.load(ordering: .relaxed) == 0)
        wakeup.wake([.part])
        try await eventually("the part's wake") { resumed.load(ordering: .relaxed) == 1 }
    }

    @Test func backlogWaitersRunWhenTheBacklogFallsToTheirMark() async throws {
        let queues = EngineQueues()
        let log = Mutex<[String]>([])
        queues.delegate.isSuspended = true
        queues.onDelegate {
            log.withLock { $0.append("backlog \(queues.delegateBacklog)") }
            // The marks are in 16 KiB units, `unitsPerOperation` to an operation.
            queues.whenBacklog(atMost: 10 * EngineQueues.unitsPerOperation) { log.withLock { $0.append("drained") } }
            queues.whenBacklog(atMost: EngineQueues.unitsPerOperation) { log.withLock { $0.append("empty") } }
        }
        for index in 1...100 { queues.onDelegate { log.withLock { $0.append("\(index)") } } }
        queues.delegate.isSuspended = false
        // The last operation's end still finds the backlog at 1 (itself): no operation comes after.
        try await eventually("the last waiter") { log.withLock { $0.last == "empty" } }
        let entries = log.withLock { $0 }
        #expect(entries.first == "backlog \(101 * EngineQueues.unitsPerOperation)")
        // Operation n ends with 101 - n left, itself included: at most 10 once the 91st ends.
        let drained = try #require(entries.firstIndex(of: "drained"))
        #expect(entries[drained - 1] == "91", "\(entries)")
        #expect(entries.filter { $0 == "drained" }.count == 1)
        #expect(entries.dropLast().last == "100")
    }

    @Test func digestWaitersRunWhenHashingBringsTheBacklogUnderTheirMark() async throws {
        let digest = StreamingDigest(FileDigest())
        let resumed = Atomic<Int>(0)
        let entered = Atomic<Bool>(false)
        let gate = DispatchSemaphore(value: 0)
        func block() -> ChunkBlock {
            let block = ChunkBlock(capacity: 1 << 20)
            _ = [UInt8](repeating: 1, count: 1 << 20).withUnsafeBytes { block.append($0) }
            return block
        }
        // The first block, once hashed, holds the digest's queue until the gate opens: the second
        // waits behind it, so the backlog stays at one block (64 chunks of 16 KiB).
        digest.feed(block()) { _ in
            entered.store(true, ordering: .relaxed)
            gate.wait()
        }
        try await eventually("the first block hashed") { entered.load(ordering: .relaxed) }
        digest.feed(block()) { _ in }
        #expect(digest.pending == 64)
        digest.whenPending(below: 64) { resumed.add(1, ordering: .relaxed) }
        #expect(resumed.load(ordering: .relaxed) == 0)
        // Under the mark already: at once.
        digest.whenPending(below: 65) { resumed.add(1, ordering: .relaxed) }
        #expect(resumed.load(ordering: .relaxed) == 1)
        gate.signal()
        try await eventually("the hashing") { resumed.load(ordering: .relaxed) == 2 }
        #expect(digest.pending == 0)
    }
}
