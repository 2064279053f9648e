import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// What one user's jobs may take of the journal: large fields written once, finished jobs counted.
@Suite("Journal budget")
struct JournalBudgetTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The submit: four 8,000-byte headers and a start time a day ahead.
    private func bigSubmit(_ directory: TemporaryDirectory, _ name: String, owner: UInt32 = 1000) -> Submit.Params {
        var headers: [String: String] = [:]
        for index in 0..<4 { headers["X-Pad-\(index)"] = String(repeating: Character(UnicodeScalar(UInt8(97 + index))), count: 8000) }
        // The owner's own directory: transferd writes only where the submitting user could.
        let home = directory.file("u\(owner)")
        if mkdir(home, 0o755) == 0 { chown(home, owner, owner) }
        var params = Submit.Params(url: "http://127.0.0.1:9/\(name)", destination: home + "/" + name, headers: headers)
        params.notBefore = Date().addingTimeInterval(86400)
        return params
    }

    private func manager(_ directory: TemporaryDirectory, budget: Int = .max) throws -> TransferManager {
        var configuration = CoreConfiguration(allowedRoots: AllowedRoots([directory.path]))
        configuration.diskReserveBytes = 0
        configuration.journalBytesPerUser = budget
        return try TransferManager(
            journal: try Journal(directory: directory.path, logger: logger), engine: ScriptedEngine(), configuration: configuration,
            logger: logger)
    }

    private func journalBytes(_ directory: TemporaryDirectory) throws -> [UInt8] {
        try #require(FileManager.default.contents(atPath: directory.file(Journal.fileName))).map { $0 }
    }

    @Test func headersAreJournaledOnceAndReadBackAfterARestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let before: Int
        do {
            let core = try manager(directory)
            before = try journalBytes(directory).count
            let job = try await core.submit(bigSubmit(directory, "a"), owner: 1000)
            _ = try await core.cancel(id: job.id, caller: 1000)
            try await core.sync()
        }
        let bytes = try journalBytes(directory)
        let name = Array("\"X-Pad-0\"".utf8)
        let copies = bytes.indices.filter { bytes[$0] == name[0] && bytes[$0...].starts(with: name) }.count
        #expect(copies == 1, "the headers are written once, not in every state record")
        // Before the split: two records of 32.7 KB each.
        #expect(bytes.count - before < 34_000, "submit and cancel wrote \(bytes.count - before) bytes")
        let reopened = try manager(directory)
        let job = try #require(try await reopened.status(id: nil, states: nil, caller: 1000).first)
        #expect(job.state == .cancelled)
        #expect(job.headerNames == ["X-Pad-0", "X-Pad-1", "X-Pad-2", "X-Pad-3"])
    }

    @Test func recordsWrittenBeforeTheSplitReadTheSame() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let journal = try Journal(directory: directory.path, logger: logger)
            let old = JobRecord(
                id: "old", order: 1, state: .queued, url: "http://127.0.0.1:9/old", destination: directory.file("old"),
                headers: ["Authorization": "Bearer x"], overwrite: false, owner: 1000, idChosenByClient: true, createdAt: Date(),
                attempts: 0, checkpointBytes: 0)
            try await journal.commit([.put(key: old.journalKey, value: Array(try WireCoding.encoder().encode(old)))])
        }
        let core = try manager(directory)
        let job = try #require(try await core.status(id: "old", states: nil, caller: 1000).first)
        #expect(job.headerNames == ["Authorization"])
        // A state change keeps the record whole: its headers have no record of their own.
        _ = try await core.cancel(id: "old", caller: 1000)
        try await core.sync()
        let reopened = try manager(directory)
        #expect(try await reopened.status(id: "old", states: nil, caller: 1000).first?.headerNames == ["Authorization"])
    }

    @Test func finishedJobsCountAgainstTheirOwnersBudgetUntilCleaned() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let core = try manager(directory, budget: 200_000)
        var refusal: CoreError?
        for round in 0..<20 {
            do {
                let job = try await core.submit(bigSubmit(directory, "f\(round)"), owner: 1000)
                _ = try await core.cancel(id: job.id, caller: 1000)
            } catch {
                refusal = error
                break
            }
        }
        let error = try #require(refusal, "20 jobs of 32 KB fit in a budget of 200 KB")
        #expect(error.kind == .limitReached("journal_bytes_per_user"))
        #expect(error.message.contains("transferctl clean"))
        // Another user's budget is their own.
        _ = try await core.submit(bigSubmit(directory, "other", owner: 1001), owner: 1001)
        _ = try await core.clean(states: nil, olderThan: nil, all: false, caller: 1000)
        _ = try await core.submit(bigSubmit(directory, "again"), owner: 1000)
    }
}
