import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

@Suite("Recovery of the core")
struct TransferManagerRecoveryTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func record(id: String, order: UInt64, state: JobState, destination: String, total: Int64?, inode: UInt64?) -> JobRecord {
        JobRecord(
            id: id, order: order, state: state, url: "http://127.0.0.1:1/\(id)", destination: destination, headers: [:],
            overwrite: false, owner: 0, idChosenByClient: false, createdAt: Date(), attempts: 1,
            checkpointBytes: 0, totalBytes: total, partialInode: inode)
    }

    private func manager(replaying records: [JobRecord], in directory: TemporaryDirectory) async throws -> TransferManager {
        let encoder = WireCoding.encoder()
        return try await manager(replaying: try records.map { ($0.journalKey, Array(try encoder.encode($0))) }, in: directory)
    }

    /// Replays records given as the journal holds them: keys and encoded values.
    private func manager(replaying values: [(key: String, value: [UInt8])], in directory: TemporaryDirectory) async throws -> TransferManager {
        let journal = try Journal(directory: directory.path, logger: logger)
        try await journal.commit(values.map { .put(key: $0.key, value: $0.value) })
        let reopened = try Journal(directory: directory.path, logger: logger)
        return try TransferManager(
            journal: reopened, engine: TransferEngine(configuration: EngineConfiguration(), logger: logger),
            configuration: CoreConfiguration(), logger: logger)
    }

    @Test func aJobThatLandedBeforeACrashIsCompletedNotFetchedAgain() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.file("landed.bin")
        _ = FileManager.default.createFile(atPath: destination, contents: Data(repeating: 7, count: 1000))
        let inode = try #require(try FileManager.default.attributesOfItem(atPath: destination)[.systemFileNumber] as? UInt64)
        let manager = try await manager(
            replaying: [record(id: "landed", order: 1, state: .running, destination: destination, total: 1000, inode: inode)],
            in: directory)
        let job = try #require(try await manager.status(id: "landed", states: nil, caller: 0).first)
        #expect(job.state == .completed)
        #expect(job.bytesReceived == 1000)
    }

    @Test func aCrashBetweenLinkAndUnlinkLeavesTheLandedFileAlone() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.file("linked.bin")
        _ = FileManager.default.createFile(atPath: destination, contents: Data(repeating: 1, count: 500))
        let inode = try #require(try FileManager.default.attributesOfItem(atPath: destination)[.systemFileNumber] as? UInt64)
        let job = record(id: "linked", order: 1, state: .running, destination: destination, total: nil, inode: inode)
        try FileManager.default.linkItem(atPath: destination, toPath: job.partialPath)
        let manager = try await manager(replaying: [job], in: directory)
        let recovered = try #require(try await manager.status(id: "linked", states: nil, caller: 0).first)
        #expect(recovered.state == .completed)
        #expect(!FileManager.default.fileExists(atPath: job.partialPath))
        #expect(FileManager.default.contents(atPath: destination)?.count == 500, "the landed file is not truncated")
    }

    @Test func runningJobsAreQueuedAgainAheadOfQueuedOnes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let manager = try await manager(
            replaying: [
                record(id: "first-queued", order: 1, state: .queued, destination: directory.file("a"), total: nil, inode: nil),
                record(id: "was-running", order: 2, state: .running, destination: directory.file("b"), total: 10, inode: 1),
                record(id: "done", order: 3, state: .completed, destination: directory.file("c"), total: 10, inode: 2),
            ],
            in: directory)
        let jobs = try await manager.status(id: nil, states: nil, caller: 0)
        #expect(jobs.map(\.state) == [.queued, .queued, .completed])
        #expect(await manager.counts.queued == 2)
    }

    @Test func otherUsersJobsLookLikeMissingOnes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var mine = record(id: "mine", order: 1, state: .completed, destination: directory.file("a"), total: 1, inode: nil)
        mine.owner = 1000
        let manager = try await manager(replaying: [mine], in: directory)
        await #expect(throws: CoreError.self) { try await manager.status(id: "mine", states: nil, caller: 1001) }
        #expect(try await manager.status(id: nil, states: nil, caller: 1001).isEmpty)
        #expect(try await manager.status(id: "mine", states: nil, caller: 1000).count == 1)
        #expect(try await manager.status(id: "mine", states: nil, caller: 0).count == 1)
    }

    @Test func aJournaledJobWithValuesOutOfRangeFailsInsteadOfStarting() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // As an older version (or a damaged but well-formed record) could have journaled them: each
        // of these would trap on its way to libcurl, on every start.
        var timeout = record(id: "idle-1e16", order: 1, state: .queued, destination: directory.file("a"), total: nil, inode: nil)
        timeout.retry = RetryLimits(idleTimeoutSeconds: 1e16)
        var ftp = record(id: "ftp", order: 2, state: .running, destination: directory.file("b"), total: nil, inode: nil)
        ftp.url = "ftp://127.0.0.1/x"
        var negative = record(id: "negative", order: 3, state: .waiting, destination: directory.file("c"), total: nil, inode: nil)
        negative.checkpointBytes = -5
        let fine = record(id: "fine", order: 4, state: .queued, destination: directory.file("d"), total: nil, inode: nil)
        let manager = try await manager(replaying: [timeout, ftp, negative, fine], in: directory)
        for id in ["idle-1e16", "ftp", "negative"] {
            let job = try #require(try await manager.status(id: id, states: nil, caller: 0).first)
            #expect(job.state == .failed, "\(id)")
            #expect(job.error?.code == .invalidJob, "\(id)")
            #expect(job.error?.message.contains("submit it again") == true, "\(job.error?.message ?? "")")
        }
        #expect(try await manager.status(id: "idle-1e16", states: nil, caller: 0).first?.error?.message.contains("retry.idle_timeout_seconds") == true)
        #expect(try await manager.status(id: "fine", states: nil, caller: 0).first?.state == .queued)
        #expect(await manager.counts.queued == 1, "only the valid job is queued")
    }

    /// A journal written by a newer version may hold an error code this one does not know: the
    /// job is still replayed, and its code is kept as written.
    @Test func aJournaledErrorCodeThisVersionDoesNotKnowIsKept() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var failed = record(id: "newer", order: 1, state: .failed, destination: directory.file("a"), total: nil, inode: nil)
        failed.error = JobError(code: .network, message: "over quota", httpStatus: 507)
        failed.finishedAt = Date()
        let encoded = String(decoding: try WireCoding.encoder().encode(failed), as: UTF8.self)
        let written = encoded.replacingOccurrences(of: #""code":"network""#, with: #""code":"quota_exceeded""#)
        #expect(written != encoded)
        let manager = try await manager(replaying: [(failed.journalKey, Array(written.utf8))], in: directory)
        let job = try #require(try await manager.status(id: "newer", states: nil, caller: 0).first)
        #expect(job.state == .failed)
        #expect(job.error?.code == .unrecognized)
        #expect(job.error?.rawCode == "quota_exceeded")
        #expect(job.error?.httpStatus == 507)
        let answered = String(decoding: try WireCoding.encoder().encode(job), as: UTF8.self)
        #expect(answered.contains(#""code":"quota_exceeded""#), "\(answered)")
    }
}
