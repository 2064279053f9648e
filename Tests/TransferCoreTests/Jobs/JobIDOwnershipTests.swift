import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// Job ids belong to their owner: the same id names each user's own job, and another user's
/// reads as no job at all (`TransferManager+JobIDs`).
@Suite("Job ids per owner")
struct JobIDOwnershipCoreTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func params(_ name: String, in directory: TemporaryDirectory, id: String = "nightly", replace: Bool = false) -> Submit.Params {
        var params = Submit.Params(url: "http://127.0.0.1:9/\(name)", destination: directory.file(name), id: id)
        params.replace = replace ? true : nil
        params.overwrite = true
        return params
    }

    @Test func twoUsersShareAnIDAndEachVerbReachesTheirOwnJob() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        chmod(directory.path, 0o1777)
        let (manager, engine) = try await startedScriptedCore(in: directory, slots: 0)
        let first = try await manager.submit(params("a", in: directory), owner: 1000)
        let second = try await manager.submit(params("b", in: directory), owner: 1001)
        #expect(first.id == "nightly" && second.id == "nightly", "both see the id they chose")
        #expect(try await manager.status(id: "nightly", states: nil, caller: 1000).first?.destination == directory.file("a"))
        #expect(try await manager.status(id: "nightly", states: nil, caller: 1001).first?.destination == directory.file("b"))
        // The same request again is the same job; another request under the id is the owner's own conflict.
        #expect(try await manager.submit(params("b", in: directory), owner: 1001).destination == directory.file("b"))
        await #expect(throws: CoreError.self) { try await manager.submit(params("c", in: directory), owner: 1001) }
        #expect(await manager.counts.total == 2)

        // Cancel, replace, pause: each reaches the caller's own.
        #expect(try await manager.cancel(id: "nightly", caller: 1001).destination == directory.file("b"))
        #expect(try await manager.status(id: "nightly", states: nil, caller: 1000).first?.state == .queued)
        let replaced = try await manager.submit(params("b", in: directory, replace: true), owner: 1001)
        #expect(replaced.state == .queued && replaced.id == "nightly")
        let paused = try await manager.pause(JobSelection(ids: ["nightly"]), caller: 1000)
        #expect(paused.jobs.map(\.owner) == [1000] && paused.notFound.isEmpty)
        #expect(try await manager.status(id: "nightly", states: nil, caller: 1001).first?.paused == nil)
        #expect(await manager.counts.total == 2, "the replacement took the cancelled job's place")

        // UID:ID names a job for root and for its owner only; another user's looks missing.
        #expect(try await manager.status(id: "1001:nightly", states: nil, caller: 0).first?.destination == directory.file("b"))
        #expect(try await manager.status(id: "1000:nightly", states: nil, caller: 1000).first?.destination == directory.file("a"))
        var messages: [String] = []
        for name in ["1000:nightly", "1000:missing"] {
            do {
                _ = try await manager.status(id: name, states: nil, caller: 1001)
            } catch {
                messages.append(error.message.replacingOccurrences(of: name, with: "ID"))
            }
        }
        #expect(messages.count == 2 && messages[0] == messages[1], "\(messages)")
        // Root's plain id is ambiguous here: the error says how to name each.
        do {
            _ = try await manager.status(id: "nightly", states: nil, caller: 0)
            Issue.record("root's plain id named one of two jobs")
        } catch {
            #expect(error.message.contains("1000:nightly, 1001:nightly") && error.message.contains("UID:ID"), "\(error.message)")
        }
        #expect(engine.started.isEmpty)
    }

    @Test func aJournalWithUnqualifiedChosenIDsReplaysUnchanged() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        chmod(directory.path, 0o1777)
        // As a version with ids shared by all users wrote it: the key is the id itself.
        var old = JobRecord(
            id: "nightly", order: 1, state: .completed, url: "http://127.0.0.1:9/old", destination: directory.file("old"), headers: [:],
            overwrite: true, owner: 1000, idChosenByClient: true, createdAt: Date(), attempts: 1, checkpointBytes: 1)
        old.finishedAt = Date()
        let journal = try Journal(directory: directory.path, logger: logger)
        try await journal.commit([.put(key: "job/nightly", value: Array(try WireCoding.encoder().encode(old)))])
        let (manager, _) = try await startedScriptedCore(in: directory, slots: 0)
        #expect(try await manager.status(id: "nightly", states: nil, caller: 1000).first?.url == "http://127.0.0.1:9/old")
        #expect(try await manager.status(id: "nightly", states: nil, caller: 0).first?.owner == 1000, "root finds the one job with the id")

        // Another user takes the id too; the owner's replacement keeps the record's key.
        #expect(try await manager.submit(params("theirs", in: directory), owner: 1001).id == "nightly")
        let replaced = try await manager.submit(params("old", in: directory, replace: true), owner: 1000)
        #expect(replaced.id == "nightly" && replaced.url == "http://127.0.0.1:9/old")
        #expect(await manager.counts.total == 2)
        #expect(await manager.jobKey("nightly", caller: 1000) == "nightly")
        #expect(await manager.jobKey("nightly", caller: 1001) == "1001:nightly")
    }

    /// A replacement keeps its job's key even when the id it qualified is free again: otherwise
    /// the record of the job it replaced would stay in the journal and come back at a restart.
    @Test func aReplacementKeepsTheKeyOfTheJobItReplaces() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        chmod(directory.path, 0o1777)
        let (manager, _) = try await startedScriptedCore(in: directory, slots: 0)
        _ = try await manager.submit(params("theirs", in: directory), owner: 1001)
        _ = try await manager.submit(params("mine", in: directory), owner: 1000)
        #expect(await manager.jobKey("nightly", caller: 1000) == "1000:nightly")
        _ = try await manager.cancel(id: "nightly", caller: 1000)
        // The other user's job goes; the plain id is free.
        _ = try await manager.cancel(id: "nightly", caller: 1001)
        _ = try await manager.remove(id: "nightly", caller: 1001)
        let replaced = try await manager.submit(params("again", in: directory, replace: true), owner: 1000)
        #expect(replaced.id == "nightly" && replaced.url == "http://127.0.0.1:9/again")
        #expect(await manager.jobKey("nightly", caller: 1000) == "1000:nightly")
        try await manager.journal.sync()
        let (restarted, _) = try await startedScriptedCore(in: directory, slots: 0)
        let mine = try await restarted.status(id: nil, states: nil, caller: 1000)
        #expect(mine.map(\.url) == ["http://127.0.0.1:9/again"])
    }
}
