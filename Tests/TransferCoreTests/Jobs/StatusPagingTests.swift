import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

/// `status` lists come in pages the core filters, and finished jobs are read back from the journal.
@Suite("Paged status")
struct StatusPagingTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func manager(in directory: TemporaryDirectory) throws -> TransferManager {
        let journal = try Journal(directory: directory.path + "/state", logger: logger)
        var configuration = CoreConfiguration()
        configuration.maxConcurrentTransfers = 1
        configuration.allowedRoots = AllowedRoots([directory.path])
        return try TransferManager(journal: journal, engine: ScriptedEngine(), configuration: configuration, logger: logger)
    }

    /// 25 jobs of uid 1000 (every fifth cancelled, the first 10 in session "s") and 5 of uid 1001.
    private func populated(_ directory: TemporaryDirectory) async throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory.path + "/state", withIntermediateDirectories: true)
        // Both users may write there (the core writes only where the submitting user could).
        chmod(directory.path, 0o1777)
        let manager = try manager(in: directory)
        var ids: [String] = []
        for index in 0..<25 {
            let job = try await manager.submit(
                Submit.Params(url: "http://127.0.0.1:9/\(index)", destination: directory.file("mine\(index)"), session: index < 10 ? "s" : nil),
                owner: 1000)
            ids.append(job.id)
            if index % 5 == 4 { _ = try await manager.cancel(id: job.id, caller: 1000) }
        }
        for index in 0..<5 {
            _ = try await manager.submit(Submit.Params(url: "http://127.0.0.1:9/o\(index)", destination: directory.file("theirs\(index)")), owner: 1001)
        }
        return ids
    }

    @Test func pagesCoverEveryJobOnceInOrderAcrossARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ids = try await populated(directory)
        // A new core replays the journal: the cancelled jobs are held as summaries and read back on demand.
        let manager = try manager(in: directory)

        var seen: [String] = []
        var query = Status.Params(limit: 10)
        while true {
            let page = try await manager.status(query, caller: 1000)
            #expect(page.total == 25)
            seen += page.jobs.map(\.id)
            guard let next = page.nextCursor else { break }
            query.cursor = next
        }
        #expect(seen == ids)

        let newest = try await manager.status(Status.Params(limit: 3, newestFirst: true), caller: 1000)
        #expect(newest.jobs.map(\.id) == Array(ids.suffix(3).reversed()))
        #expect(newest.counts == ["queued": 20, "cancelled": 5])

        let cancelled = try await manager.status(Status.Params(states: [.cancelled]), caller: 1000)
        #expect(cancelled.jobs.map(\.id) == [4, 9, 14, 19, 24].map { ids[$0] })
        #expect(cancelled.jobs.allSatisfy { $0.state == .cancelled && $0.finishedAt != nil })
        #expect(cancelled.nextCursor == nil)

        let session = try await manager.status(Status.Params(session: "s"), caller: 1000)
        #expect(session.jobs.map(\.id) == Array(ids.prefix(10)))
    }

    @Test func otherUsersJobsNeedRootAndBadCursorsAndLimitsAreRefused() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        _ = try await populated(directory)
        let manager = try manager(in: directory)

        #expect(try await manager.status(Status.Params(owner: 1001), caller: 0).total == 5)
        #expect(try await manager.status(Status.Params(all: true), caller: 0).total == 30)
        #expect(try await manager.status(Status.Params(owner: 1000), caller: 1000).total == 25)
        for query in [Status.Params(owner: 1001), Status.Params(all: true)] {
            await #expect(throws: CoreError.self) { try await manager.status(query, caller: 1000) }
        }
        for query in [Status.Params(limit: 0), Status.Params(limit: Status.maxLimit + 1), Status.Params(cursor: "yesterday")] {
            await #expect(throws: CoreError.self) { try await manager.status(query, caller: 1000) }
        }
    }

    @Test func aFinishedJobIsHeldAsASummaryAndReadBackWhole() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let ids = try await populated(directory)
        let manager = try manager(in: directory)
        let job = try #require(try await manager.status(Status.Params(id: ids[4]), caller: 1000).jobs.first)
        #expect(job.state == .cancelled && job.url == "http://127.0.0.1:9/4" && job.destination == directory.file("mine4"))
        // A finished job no longer holds its destination: a new submit to it is a new job.
        let again = try await manager.submit(Submit.Params(url: "http://127.0.0.1:9/4", destination: directory.file("mine4")), owner: 1000)
        #expect(again.id != ids[4])
    }
}
