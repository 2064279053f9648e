import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

/// A batch of submits is one durable step: its records share the journal's sync.
@Suite("Batches of submits")
struct TransferManagerBatchTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// A manager whose journal is in `directory`'s `state`, writing below `directory`.
    private func manager(in directory: TemporaryDirectory) throws -> (TransferManager, Journal) {
        try FileManager.default.createDirectory(atPath: directory.path + "/state", withIntermediateDirectories: true)
        let journal = try Journal(directory: directory.path + "/state", logger: logger)
        var configuration = CoreConfiguration()
        configuration.maxConcurrentTransfers = 1
        configuration.allowedRoots = AllowedRoots([directory.path])
        // Scripted: these tests are about the journal, and a real engine released while a transfer
        // it was asked to start is still on its way to URLSession traps ("Session invalidated").
        let manager = try TransferManager(journal: journal, engine: ScriptedEngine(), configuration: configuration, logger: logger)
        return (manager, journal)
    }

    private func submits(_ count: Int, in directory: TemporaryDirectory, prefix: String) -> [Submit.Params] {
        (0..<count).map { Submit.Params(url: "http://127.0.0.1:9/\(prefix)\($0)", destination: directory.file("\(prefix)\($0)")) }
    }

    @Test func aBatchOfSubmitsIsSyncedOnceWhileOneByOneEachIsSynced() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, journal) = try manager(in: directory)
        try await journal.sync()

        let before = journal.statistics
        let results = await manager.submit(submits(100, in: directory, prefix: "batch"), owner: 0)
        let afterBatch = journal.statistics
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
        // The 100 records, then at most the first job's start (written without waiting).
        #expect(afterBatch.syncs - before.syncs <= 3, "a batch of 100 submits took \(afterBatch.syncs - before.syncs) syncs")

        for params in submits(20, in: directory, prefix: "single") {
            _ = try await manager.submit(params, owner: 0)
        }
        #expect(journal.statistics.syncs - afterBatch.syncs >= 20, "each single submit waits for its own sync")
    }

    @Test func refusedSubmitsOfABatchLeaveTheOthersAccepted() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try manager(in: directory)
        let results = await manager.submit(
            [
                Submit.Params(url: "http://127.0.0.1:9/a", destination: directory.file("a")),
                Submit.Params(url: "ftp://127.0.0.1/b", destination: directory.file("b")),
                Submit.Params(url: "http://127.0.0.1:9/c", destination: directory.file("a")),
                Submit.Params(url: "http://127.0.0.1:9/d", destination: "/elsewhere/d"),
                Submit.Params(url: "http://127.0.0.1:9/e", destination: directory.file("e")),
            ], owner: 0)
        let kinds = results.map { result -> CoreError.Kind? in
            if case .failure(let error) = result { return error.kind }
            return nil
        }
        #expect(kinds == [nil, .unsupportedURL, .destinationBusy, .invalidDestination, nil])
        #expect(try await manager.status(id: nil, states: nil, caller: 0).count == 2)
    }

    /// `count` submits through `coalescer` at once, each a task of its own as pipelined requests are.
    private func submitAtOnce(
        _ params: [(Submit.Params, owner: UInt32)], through coalescer: SubmitCoalescer
    ) async -> [Result<Job, CoreError>] {
        await withTaskGroup(of: (Int, Result<Job, CoreError>).self) { group in
            for (index, (params, owner)) in params.enumerated() {
                group.addTask { (index, await coalescer.submit(params, owner: owner)) }
            }
            var results = [Result<Job, CoreError>?](repeating: nil, count: params.count)
            for await (index, result) in group { results[index] = result }
            return results.map { $0 ?? .failure(CoreError(.internalFailure, "no answer")) }
        }
    }

    @Test func submitsThatArriveTogetherShareSyncs() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, journal) = try manager(in: directory)
        try await journal.sync()
        let before = journal.statistics
        let results = await submitAtOnce(submits(300, in: directory, prefix: "p").map { ($0, owner: 0) }, through: SubmitCoalescer(manager: manager))
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
        // Alone, each would wait for a sync of its own: 300 or more.
        let syncs = journal.statistics.syncs - before.syncs
        #expect(syncs < 150, "300 submits at once took \(syncs) syncs")
        #expect(try await manager.status(id: nil, states: nil, caller: 0).count == 300)
    }

    @Test func eachSubmitGathersItsOwnAnswerAndOwner() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _) = try manager(in: directory)
        // Another user may write there too.
        try FileManager.default.setAttributes([.posixPermissions: 0o1777], ofItemAtPath: directory.path)
        var params: [(Submit.Params, owner: UInt32)] = []
        for index in 0..<60 {
            let owner: UInt32 = index % 2 == 0 ? 0 : 1000
            switch index % 5 {
            case 1: params.append((Submit.Params(url: "ftp://127.0.0.1/\(index)", destination: directory.file("f\(index)")), owner))
            case 3: params.append((Submit.Params(url: "http://127.0.0.1:9/\(index)", destination: "/elsewhere/\(index)"), owner))
            default: params.append((Submit.Params(url: "http://127.0.0.1:9/\(index)", destination: directory.file("f\(index)")), owner))
            }
        }
        let results = await submitAtOnce(params, through: SubmitCoalescer(manager: manager))
        for (index, result) in results.enumerated() {
            switch (index % 5, result) {
            case (1, .failure(let error)): #expect(error.kind == .unsupportedURL, "\(index)")
            case (3, .failure(let error)): #expect(error.kind == .invalidDestination, "\(index)")
            case (let kind, .success(let job)) where kind != 1 && kind != 3:
                // Each accepted job is its own submitter's, wherever its batch was gathered.
                #expect(job.owner == params[index].owner, "\(index)")
                #expect(job.destination == directory.file("f\(index)"))
            default: Issue.record("submit \(index) was answered \(result)")
            }
        }
    }
}
