import Dispatch
import Synchronization
import Testing
@testable import TransferCore

@Suite("A thread whose start is checked")
struct CheckedThreadTests {
    @Test func theBodyRunsOnAnotherThreadOnce() {
        let runs = Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        let started = CheckedThread.start {
            runs.add(1, ordering: .relaxed)
            done.signal()
        }
        #expect(started)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test func aValidStackSizeStartsTheThreadAnInvalidOneIsRefused() {
        let done = DispatchSemaphore(value: 0)
        #expect(CheckedThread.start(stackBytes: 1 << 20) { done.signal() })
        #expect(done.wait(timeout: .now() + 30) == .success)
        // Below the system's least stack: refused, and the body never runs.
        let ran = Atomic<Bool>(false)
        #expect(!CheckedThread.start(stackBytes: 1) { ran.store(true, ordering: .relaxed) })
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
    }
}
