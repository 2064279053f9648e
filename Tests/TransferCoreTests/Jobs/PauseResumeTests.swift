import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// The core's pause and resume decisions, driven by a scripted engine.
@Suite("Pause and resume with a scripted engine")
struct PauseResumeTests {

    /// A started core on the journal in `directory` (a restart when one was there), its engine scripted.
    func core(in directory: TemporaryDirectory, slots: Int = 1) async throws -> (TransferManager, ScriptedEngine) {
        try await startedScriptedCore(in: directory, slots: slots)
    }

    func submit(_ manager: TransferManager, _ id: String, in directory: TemporaryDirectory, owner: UInt32 = 0) async throws {
        _ = try await manager.submit(Submit.Params(url: "http://127.0.0.1:1/\(id)", destination: directory.file(id), id: id), owner: owner)
    }

    func job(_ manager: TransferManager, _ id: String) async throws -> Job {
        try #require(try await manager.status(id: id, states: nil, caller: 0).first)
    }

    @Test func pausingARunningJobStopsItAndKeepsItQueuedAtItsCheckpoint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "a", in: directory)
        try await submit(manager, "b", in: directory)
        try await eventually("a starts") { engine.started.count == 1 }
        engine.report(.responded(jobID: "a", totalBytes: 100, validator: "\"v\"", startOffset: 0, partialInode: 1, generation: 0, finalURL: nil))
        engine.onStop("a", keeping: 40)
        let result = try await manager.pause(JobSelection(ids: ["a"]), caller: 0)
        #expect(engine.stopped == ["a"])
        let paused = try #require(result.jobs.first)
        #expect(paused.state == .queued && paused.paused == true && paused.bytesReceived == 40, "the answer comes once the transfer stopped")
        #expect(result.notFound.isEmpty && result.hold == nil)
        // The slot it held goes to the next job; it is not started itself.
        try await eventually("b starts") { engine.started.count == 2 }
        #expect(engine.started.map(\.jobID) == ["a", "b"])
        _ = try await manager.resume(JobSelection(ids: ["a"]), caller: 0)
        #expect(try await job(manager, "a").paused == nil)
        engine.complete("b", bytes: 1)
        try await eventually("a starts again") { engine.started.count == 3 }
        let again = engine.started[2]
        #expect(again.jobID == "a" && again.resumeFrom == 40 && again.validator == "\"v\"" && again.totalBytes == 100)
    }

    @Test func aPausedQueuedJobIsPassedOverAndResumesInItsSubmissionOrder() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        for id in ["a", "b", "c", "d"] { try await submit(manager, id, in: directory) }
        try await eventually("a starts") { engine.started.count == 1 }
        let result = try await manager.pause(JobSelection(ids: ["b"]), caller: 0)
        #expect(result.jobs.map(\.state) == [.queued] && result.jobs.first?.paused == true)
        #expect(engine.stopped.isEmpty, "a queued job has no transfer to stop")
        engine.complete("a", bytes: 1)
        try await eventually("c starts") { engine.started.count == 2 }
        #expect(engine.started.last?.jobID == "c", "the paused job is passed over")
        _ = try await manager.resume(JobSelection(ids: ["b"]), caller: 0)
        engine.complete("c", bytes: 1)
        try await eventually("the next start") { engine.started.count == 3 }
        #expect(engine.started.last?.jobID == "b", "resumed, b goes before d, which was submitted after it")
    }

    @Test func pausingAWaitingJobCancelsItsRetryUntilResumed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "w", in: directory)
        try await eventually("w starts") { engine.started.count == 1 }
        engine.interrupt("w", JobError(code: .connectionLost, message: "lost"), retryAfter: 30)
        try await eventually("w waits") { try await job(manager, "w").state == .waiting }
        let paused = try #require(try await manager.pause(JobSelection(ids: ["w"]), caller: 0).jobs.first)
        #expect(paused.state == .queued && paused.paused == true && paused.nextAttemptAt == nil)
        #expect(await manager.counts.waiting == 0, "its retry timer is gone")
        #expect(engine.started.count == 1)
        _ = try await manager.resume(JobSelection(ids: ["w"]), caller: 0)
        try await eventually("w starts again") { engine.started.count == 2 }
    }

    @Test func aFailureMetWhilePausingHoldsTheJobInsteadOfRetrying() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "f", in: directory)
        try await eventually("f starts") { engine.started.count == 1 }
        engine.onStop("f", answer: .notRunning)
        _ = try await manager.pause(JobSelection(ids: ["f"]), caller: 0)
        engine.interrupt("f", JobError(code: .connectionLost, message: "lost"), kept: StoppedTransfer(bytes: 7, validator: "\"v\"", totalBytes: 9))
        try await eventually("f held") { try await job(manager, "f").state == .queued }
        let held = try await job(manager, "f")
        #expect(held.paused == true && held.bytesReceived == 7)
        let counts = await manager.counts
        #expect(counts.waiting == 0 && engine.started.count == 1, "no retry while paused")
    }

    @Test func pausingOrResumingAFinishedJobIsRefusedAndChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "done", in: directory)
        try await submit(manager, "next", in: directory)
        try await eventually("done starts") { engine.started.count == 1 }
        engine.complete("done", bytes: 3)
        try await eventually("done completes") { try await job(manager, "done").state == .completed }
        for verb in ["pause", "resume"] {
            do {
                let selection = JobSelection(ids: ["next", "done"])
                _ = verb == "pause" ? try await manager.pause(selection, caller: 0) : try await manager.resume(selection, caller: 0)
                Issue.record("\(verb) of a finished job was accepted")
            } catch {
                #expect(error.kind == .jobFinished)
                #expect(error.message.contains("done") && error.message.contains("completed"))
            }
        }
        #expect(try await job(manager, "next").paused == nil, "nothing was paused")
    }

    @Test func anotherUsersJobIsNotFoundButRootSeesIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A directory user 1000 may write to, so that its submit is accepted.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: directory.path)
        let (manager, _) = try await core(in: directory, slots: 0)
        try await submit(manager, "mine", in: directory, owner: 1000)
        let other = try await manager.pause(JobSelection(ids: ["mine", "nope"]), caller: 1001)
        #expect(other.jobs.isEmpty && other.notFound == ["mine", "nope"])
        let owner = try await manager.pause(JobSelection(all: true), caller: 1000)
        #expect(owner.jobs.map(\.id) == ["mine"] && owner.hold == nil, "a user's all is only their jobs, and no hold")
        #expect(await manager.isHeld == false)
        let root = try await manager.resume(JobSelection(ids: ["mine"]), caller: 0)
        #expect(root.jobs.map(\.id) == ["mine"] && root.jobs.first?.paused == nil)
    }

    @Test func aSessionSelectsOnlyThatSessionsJobs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try await core(in: directory, slots: 0)
        for (id, session) in [("s1", "nightly"), ("s2", "nightly"), ("o", "other")] {
            _ = try await manager.submit(
                Submit.Params(url: "http://127.0.0.1:1/\(id)", destination: directory.file(id), id: id, session: session), owner: 0)
        }
        let result = try await manager.pause(JobSelection(session: "nightly"), caller: 0)
        #expect(result.jobs.map(\.id) == ["s1", "s2"])
        #expect(try await job(manager, "o").paused == nil)
    }

    @Test func aSelectionMustNameJobsOneWay() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try await core(in: directory)
        for selection in [JobSelection(), JobSelection(ids: []), JobSelection(ids: ["a"], all: true), JobSelection(all: false)] {
            await #expect(throws: CoreError.self) { try await manager.pause(selection, caller: 0) }
        }
    }

    @Test func theHoldAndPausedJobsSurviveARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var (manager, engine) = try await core(in: directory)
        try await submit(manager, "p", in: directory)
        try await eventually("p starts") { engine.started.count == 1 }
        engine.onStop("p", keeping: 5)
        let held = try await manager.pause(JobSelection(all: true), caller: 0)
        #expect(held.hold == true && held.jobs.first?.paused == true)
        try await submit(manager, "new", in: directory)
        #expect(try await job(manager, "new").state == .queued && engine.started.count == 1, "the hold keeps new jobs from starting")
        await manager.shutdown()

        (manager, engine) = try await core(in: directory)
        #expect(await manager.isHeld)
        let p = try await job(manager, "p")
        #expect(p.paused == true && p.bytesReceived == 5)
        let counts = await manager.counts
        #expect(counts.held && counts.paused == 1)
        // `start()` has scheduled: nothing ran.
        #expect(engine.started.isEmpty, "nothing starts under the hold after a restart")
        let lifted = try await manager.resume(JobSelection(all: true), caller: 0)
        #expect(lifted.hold == false && lifted.jobs.map(\.id) == ["p", "new"])
        try await eventually("p starts after the hold") { engine.started.count == 1 }
        #expect(engine.started.first?.jobID == "p" && engine.started.first?.resumeFrom == 5)
        await manager.shutdown()

        (manager, engine) = try await core(in: directory)
        #expect(await manager.isHeld == false, "the lifted hold stays lifted")
    }

    @Test func aPausedQueuedJobIsNotStartedAfterARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var (manager, engine) = try await core(in: directory, slots: 0)
        try await submit(manager, "q", in: directory)
        _ = try await manager.pause(JobSelection(ids: ["q"]), caller: 0)
        await manager.shutdown()
        (manager, engine) = try await core(in: directory, slots: 1)
        #expect(engine.started.isEmpty, "start() scheduled, and passed the paused job over")
        #expect(try await job(manager, "q").paused == true)
        _ = try await manager.resume(JobSelection(ids: ["q"]), caller: 0)
        try await eventually("q starts") { engine.started.count == 1 }
    }

    @Test func pauseAndResumeAreAnnouncedAsEvents() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try await core(in: directory, slots: 0)
        let subscription = try await manager.subscribe(Subscribe.Params(), caller: 0, queueLimit: 100)
        try await submit(manager, "e", in: directory)
        _ = try await manager.pause(JobSelection(ids: ["e"]), caller: 0)
        _ = try await manager.resume(JobSelection(ids: ["e"]), caller: 0)
        var types: [JobEventType] = []
        while types.count < 3, let item = await subscription.next() {
            if case .event(let event) = item { types.append(event.type) }
        }
        #expect(types == [.queued, .paused, .resumed])
    }
}
