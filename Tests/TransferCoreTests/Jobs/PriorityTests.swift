import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// Priority classes, moves within a class, background yields and the per-host limit, driven by a
/// scripted engine.
@Suite("Priorities and per-host fairness with a scripted engine")
struct PriorityTests {

    /// A started core on the journal in `directory` (a restart when one was there), its engine scripted.
    func core(in directory: TemporaryDirectory, slots: Int = 1, perHost: Int = 2) async throws -> (TransferManager, ScriptedEngine) {
        try await startedScriptedCore(in: directory, slots: slots, perHost: perHost)
    }

    func submit(
        _ manager: TransferManager, _ id: String, _ priority: JobPriority? = nil, host: String = "127.0.0.1", in directory: TemporaryDirectory
    ) async throws {
        var params = Submit.Params(url: "http://\(host):1/\(id)", destination: directory.file(id), id: id)
        params.priority = priority?.rawValue
        _ = try await manager.submit(params, owner: 0)
    }

    func job(_ manager: TransferManager, _ id: String) async throws -> Job {
        try #require(try await manager.status(id: id, states: nil, caller: 0).first)
    }

    /// Completes the running `id` and waits for the next start.
    func finish(_ id: String, _ engine: ScriptedEngine, expectingStarts count: Int) async throws {
        engine.complete(id, bytes: 1)
        try await eventually("start \(count)") { engine.started.count == count }
    }

    @Test func priorityAndMoveAreAnnouncedAsEvents() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try await core(in: directory, slots: 0)
        let subscription = try await manager.subscribe(Subscribe.Params(), caller: 0, queueLimit: 100)
        try await submit(manager, "p", in: directory)
        _ = try await manager.setPriority(id: "p", to: "foreground", caller: 0)
        // The same class again changes nothing and says nothing.
        _ = try await manager.setPriority(id: "p", to: "foreground", caller: 0)
        _ = try await manager.move(Move.Params(id: "p", first: true), caller: 0)
        var events: [JobEvent] = []
        while events.count < 3, let item = await subscription.next() {
            if case .event(let event) = item { events.append(event) }
        }
        #expect(events.map(\.type) == [.queued, .prioritized, .prioritized])
        #expect(events.last?.job.priority == .foreground)
    }

    @Test func queuedJobsStartForegroundFirstThenNormalThenBackground() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "a", in: directory)
        try await eventually("a starts") { engine.started.count == 1 }
        try await submit(manager, "bg", .background, in: directory)
        try await submit(manager, "n1", .normal, in: directory)
        try await submit(manager, "fg", .foreground, in: directory)
        try await submit(manager, "n2", in: directory)
        #expect(try await job(manager, "bg").priority == .background)
        #expect(try await job(manager, "n2").priority == .normal, "the wire names the default class")
        for (id, count) in [("a", 2), ("fg", 3), ("n1", 4), ("n2", 5)] { try await finish(id, engine, expectingStarts: count) }
        #expect(engine.started.map(\.jobID) == ["a", "fg", "n1", "n2", "bg"])
        #expect(engine.stopped.isEmpty, "no background transfer ran while others waited")
    }

    @Test func moveFirstAndBeforeReorderAClassAndSurviveARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var (manager, engine) = try await core(in: directory, slots: 0)
        for id in ["a", "b", "c", "d"] { try await submit(manager, id, in: directory) }
        try await submit(manager, "bg", .background, in: directory)
        _ = try await manager.move(Move.Params(id: "d", first: true), caller: 0)
        _ = try await manager.move(Move.Params(id: "c", before: "a"), caller: 0)
        do {
            _ = try await manager.move(Move.Params(id: "a", before: "bg"), caller: 0)
            Issue.record("a move before a job of another class was accepted")
        } catch {
            #expect(error.kind == .invalidParameter("before") && error.message.contains("transferctl priority a background"), "\(error)")
        }
        do {
            _ = try await manager.move(Move.Params(id: "a", first: true), caller: 1000)
            Issue.record("another user moved root's job")
        } catch {
            #expect(error.kind == .noSuchJob, "\(error)")
        }
        do {
            _ = try await manager.setPriority(id: "a", to: "urgent", caller: 0)
            Issue.record("an unknown class was accepted")
        } catch {
            #expect(error.kind == .invalidParameter("priority") && error.message.contains("foreground, normal or background"), "\(error)")
        }
        await manager.shutdown()

        (manager, engine) = try await core(in: directory, slots: 1)
        try await eventually("the first start") { engine.started.count == 1 }
        for (id, count) in [("d", 2), ("c", 3), ("a", 4), ("b", 5)] { try await finish(id, engine, expectingStarts: count) }
        #expect(engine.started.map(\.jobID) == ["d", "c", "a", "b", "bg"])
    }

    @Test func aBackgroundTransferYieldsItsSlotToANormalArrivalAndContinuesFromItsCheckpoint() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "bg", .background, in: directory)
        try await eventually("bg starts") { engine.started.count == 1 }
        engine.report(.responded(jobID: "bg", totalBytes: 100, validator: "\"v\"", startOffset: 0, partialInode: 1, generation: 0, finalURL: nil))
        try await submit(manager, "bg2", .background, in: directory)
        #expect(engine.stopped.isEmpty, "a background arrival does not displace a background transfer")

        engine.onStop("bg", keeping: 40)
        try await submit(manager, "n", in: directory)
        #expect(engine.stopped == ["bg"], "the engine is asked to stop the background transfer")
        try await eventually("n starts") { engine.started.count == 2 }
        #expect(engine.started.last?.jobID == "n")
        let yielded = try await job(manager, "bg")
        #expect(yielded.state == .queued && yielded.bytesReceived == 40, "\(yielded)")

        try await finish("n", engine, expectingStarts: 3)
        let again = engine.started[2]
        #expect(again.jobID == "bg", "the yielded job is at the front of its class, ahead of bg2")
        #expect(again.resumeFrom == 40 && again.validator == "\"v\"" && again.totalBytes == 100)
    }

    @Test func aYieldedBackgroundJobKeepsItsPlaceAtTheFrontAcrossARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var (manager, engine) = try await core(in: directory)
        try await submit(manager, "bg", .background, in: directory)
        try await eventually("bg starts") { engine.started.count == 1 }
        try await submit(manager, "bg2", .background, in: directory)
        // bg2 is moved to the front of the class: only the yield keeps bg ahead of it.
        _ = try await manager.move(Move.Params(id: "bg2", first: true), caller: 0)
        engine.onStop("bg", keeping: 40)
        try await submit(manager, "n", in: directory)
        try await eventually("n starts") { engine.started.count == 2 }
        await manager.shutdown()
        // After the restart n continues first (it was running), then bg ahead of bg2.
        (manager, engine) = try await core(in: directory)
        try await eventually("n starts again") { engine.started.count == 1 }
        #expect(engine.started.map(\.jobID) == ["n"])
        try await finish("n", engine, expectingStarts: 2)
        #expect(engine.started.last?.jobID == "bg", "the yielded job is still ahead of bg2: \(engine.started.map(\.jobID))")
    }

    @Test func aJobMadeForegroundTakesABackgroundTransfersSlot() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory)
        try await submit(manager, "bg", .background, in: directory)
        try await submit(manager, "later", .background, in: directory)
        try await eventually("bg starts") { engine.started.count == 1 }
        let changed = try await manager.setPriority(id: "later", to: "foreground", caller: 0)
        #expect(changed.priority == .foreground)
        try await eventually("later starts") { engine.started.count == 2 }
        #expect(engine.stopped == ["bg"] && engine.started.last?.jobID == "later")
    }

    @Test func aJobToABusyHostWaitsWhileAnotherHostsJobStarts() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory, slots: 3, perHost: 2)
        for id in ["a1", "a2", "a3"] { try await submit(manager, id, host: "127.0.0.1", in: directory) }
        try await submit(manager, "b1", host: "127.0.0.2", in: directory)
        try await eventually("three starts") { engine.started.count == 3 }
        #expect(engine.started.map(\.jobID) == ["a1", "a2", "b1"], "b1 starts ahead of a3, whose host is busy")
        #expect(try await job(manager, "a3").state == .queued)
        try await finish("a1", engine, expectingStarts: 4)
        #expect(engine.started.last?.jobID == "a3", "a3 keeps its turn once its host has room")
    }

    @Test func aBackgroundTransferYieldsToAJobWaitingForItsHost() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await core(in: directory, slots: 2, perHost: 1)
        try await submit(manager, "bg", .background, host: "127.0.0.1", in: directory)
        try await eventually("bg starts") { engine.started.count == 1 }
        try await submit(manager, "n", host: "127.0.0.1", in: directory)
        try await eventually("n starts") { engine.started.count == 2 }
        #expect(engine.stopped == ["bg"] && engine.started.last?.jobID == "n")
        #expect(try await job(manager, "bg").state == .queued, "it waits for its host, not for a slot")
    }
}
