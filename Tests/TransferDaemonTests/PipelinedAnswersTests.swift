import NIOCore
import Synchronization
import Testing
@testable import TransferDaemon

/// Pipelined answers leave in request order, those ready together in one write.
@Suite("Pipelined answers")
struct PipelinedAnswersTests {
    /// What the writer sent: each call's answers, as text.
    final class Sent: Sendable {
        let calls = Mutex<[[String]]>([])
        var all: [String] { calls.withLock { $0.flatMap { $0 } } }
        var count: Int { calls.withLock { $0.count } }
        func record(_ batch: [ByteBuffer]) { calls.withLock { $0.append(batch.map { String(buffer: $0) }) } }
    }

    /// A gate a request waits at until the test opens it.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        func wait() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if state.open { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
        func open() {
            for waiting in state.withLock({ state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }) { waiting.resume() }
        }
    }

    /// Waits until `condition` holds, yielding, for at most `seconds`.
    func until(_ seconds: Double = 10, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !condition() {
            try #require(ContinuousClock.now < deadline, "timed out")
            await Task.yield()
        }
    }

    @Test("answers keep the requests' order, whatever order they finish in, and ready ones go in one write")
    func orderAndGrouping() async throws {
        let answers = PipelinedAnswers(activity: ConnectionActivity())
        let sent = Sent()
        let writer = Task { await answers.write { sent.record($0) } }
        let gates = (0..<5).map { _ in Gate() }
        for index in 0..<5 {
            try await answers.add {
                await gates[index].wait()
                return index == 2 ? nil : ByteBuffer(string: "a\(index)")  // 2 is a notification
            }
        }
        // The last four finish first: nothing may leave before the first.
        for index in (1..<5).reversed() { gates[index].open() }
        try await until { answers.waiting.answers == 4 }
        #expect(sent.count == 0)
        gates[0].open()
        try await answers.drain()
        #expect(sent.calls.withLock { $0 } == [["a0", "a1", "a3", "a4"]])
        answers.finish()
        await writer.value
    }

    @Test("drain returns once everything before it is written, and the writer ends after finish")
    func drainAndFinish() async throws {
        let answers = PipelinedAnswers(activity: ConnectionActivity())
        let sent = Sent()
        let writer = Task { await answers.write { sent.record($0) } }
        try await answers.drain()  // nothing outstanding
        for index in 0..<300 { try await answers.add { ByteBuffer(string: "\(index)") } }  // past the window
        try await answers.drain()
        #expect(sent.all == (0..<300).map(String.init))
        let gate = Gate()
        try await answers.add {
            await gate.wait()
            return ByteBuffer(string: "last")
        }
        answers.finish()
        gate.open()
        await writer.value
        #expect(sent.all.last == "last")
    }

    @Test("after a failed write the rest is dropped and waiting readers still go")
    func brokenConnection() async throws {
        struct Broken: Error {}
        let answers = PipelinedAnswers(activity: ConnectionActivity())
        let calls = Atomic<Int>(0)
        let writer = Task {
            await answers.write { _ in
                calls.wrappingAdd(1, ordering: .relaxed)
                throw Broken()
            }
        }
        try await answers.add { ByteBuffer(string: "a") }
        try await answers.drain()
        try await answers.add { ByteBuffer(string: "b") }
        try await answers.drain()
        answers.finish()
        await writer.value
        #expect(calls.load(ordering: .relaxed) == 1)
    }

    @Test("a cancelled writer ends though a request still runs, and lets a waiting reader go")
    func cancelledWriter() async throws {
        let answers = PipelinedAnswers(activity: ConnectionActivity())
        let sent = Sent()
        let writer = Task { await answers.write { sent.record($0) } }
        let gate = Gate()
        try await answers.add {
            await gate.wait()
            return ByteBuffer(string: "late")
        }
        let reader = Task { try await answers.drain() }
        try await until { answers.waiting.readers == 1 }
        writer.cancel()
        await writer.value
        try await reader.value
        gate.open()  // the answer comes after the writer ended: dropped, no crash
        try await answers.add { ByteBuffer(string: "after") }  // not even started
        try await answers.drain()  // returns: nobody is left to write
        #expect(sent.all.isEmpty)
    }
}
