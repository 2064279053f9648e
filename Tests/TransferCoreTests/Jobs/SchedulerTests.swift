import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// The core's scheduling, retry and back-off, driven by a scripted engine: no network, no process.
@Suite("Scheduling and retry with a scripted engine")
struct SchedulerTests {

    /// A started core on a fresh journal, its engine scripted, its retries fast.
    func core(in directory: TemporaryDirectory, slots: Int = 2, maxAttempts: Int = 20) async throws -> (TransferManager, ScriptedEngine) {
        try await startedScriptedCore(in: directory, slots: slots, maxAttempts: maxAttempts)
    }

    func submit(_ manager: TransferManager, _ id: String, in directory: TemporaryDirectory) async throws {
        _ = try await manager.submit(Submit.Params(url: "http://127.0.0.1:1/\(id)", destination: directory.file(id), id: id), owner: 0)
    }

    func state(_ manager: TransferManager, _ id: String) async throws -> JobState? {
        try await manager.status(id: id, states: nil, caller: 0).first?.state
    }

    @Test func jobsStartInSubmissionOrderWithinTheSlots() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory, slots: 2)
        for id in ["a", "b", "c", "d"] { try await submit(manager, id, in: directory) }
        try await eventually("two starts") { engine.started.count == 2 }
        #expect(engine.started.map(\.jobID) == ["a", "b"])
        #expect(try await state(manager, "c") == .queued)
        engine.complete("a", bytes: 10)
        try await eventually("the third start") { engine.started.count == 3 }
        #expect(engine.started.last?.jobID == "c")
        #expect(try await state(manager, "a") == .completed)
        engine.report(.failed(jobID: "b", error: JobError(code: .httpStatus, message: "404")))
        try await eventually("the fourth start") { engine.started.count == 4 }
        #expect(try await state(manager, "b") == .failed)
    }

    @Test func anInterruptedJobWaitsThenResumesFromWhatWasKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "r", in: directory)
        try await eventually("the first start") { engine.started.count == 1 }
        engine.report(.responded(jobID: "r", totalBytes: 100, validator: "\"v\"", startOffset: 0, partialInode: 1, generation: 0, finalURL: nil))
        engine.interrupt("r", JobError(code: .connectionLost, message: "lost"), kept: StoppedTransfer(bytes: 40, validator: "\"v\"", totalBytes: 100))
        try await eventually("the retry") { engine.started.count == 2 }
        let retry = engine.started[1]
        #expect(retry.resumeFrom == 40 && retry.validator == "\"v\"" && retry.totalBytes == 100)
    }

    @Test func theServersRetryAfterIsWaitedFor() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "w", in: directory)
        try await eventually("the first start") { engine.started.count == 1 }
        engine.interrupt("w", JobError(code: .httpStatus, message: "503", httpStatus: 503), retryAfter: 3600)
        try await eventually("the waiting state") { try await state(manager, "w") == .waiting }
        let job = try #require(try await manager.status(id: "w", states: nil, caller: 0).first)
        let wait = try #require(job.nextAttemptAt).timeIntervalSinceNow
        #expect(wait > 3500 && wait <= 3600, "the job waits as long as the server asked")
        #expect(engine.started.count == 1)
    }

    @Test func aJobFailsAfterItsMaximumAttemptsWithTheLastError() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory, maxAttempts: 3)
        try await submit(manager, "f", in: directory)
        for attempt in 1...3 {
            try await eventually("attempt \(attempt)") { engine.started.count == attempt }
            engine.interrupt("f", JobError(code: .connectionRefused, message: "refused \(attempt)"))
        }
        try await eventually("the failure") { try await state(manager, "f") == .failed }
        let job = try #require(try await manager.status(id: "f", states: nil, caller: 0).first)
        #expect(job.error?.code == .connectionRefused)
        #expect(job.error?.message.contains("refused 3") == true)
        #expect(engine.started.count == 3)
    }

    @Test func aCancelThatMeetsAnAttemptEndingJustThenCancelsTheJob() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory, slots: 1)
        try await submit(manager, "racing", in: directory)
        try await eventually("the start") { engine.started.count == 1 }
        // The attempt fails (a retry is due) while the cancel is on its way: the engine finds
        // nothing running, and the core cancels the job as the failure left it.
        engine.endsBeforeCancel("racing")
        let cancel = Task { try await manager.cancel(id: "racing", caller: 0) }
        try await eventually("the cancel to reach the engine") { engine.cancelled == ["racing"] }
        engine.interrupt("racing", JobError(code: .network, message: "connection refused"))
        let job = try await cancel.value
        #expect(job.state == .cancelled)
        #expect(try await state(manager, "racing") == .cancelled)
    }

    @Test func aCancelledQueuedJobNeverStartsAndFreesNoSlot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory, slots: 1)
        try await submit(manager, "one", in: directory)
        try await submit(manager, "two", in: directory)
        try await eventually("the first start") { engine.started.count == 1 }
        _ = try await manager.cancel(id: "two", caller: 0)
        #expect(try await state(manager, "two") == .cancelled)
        engine.complete("one", bytes: 1)
        try await eventually("one completed") { try await state(manager, "one") == .completed }
        #expect(engine.started.map(\.jobID) == ["one"])
    }
}
