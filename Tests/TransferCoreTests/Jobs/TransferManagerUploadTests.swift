import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

/// Uploads in the core: a submit claims its spool copy, the engine gets a plan, the end frees the copy.
@Suite("Uploads in the core")
struct TransferManagerUploadTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func setUp(_ directory: TemporaryDirectory) throws -> (TransferManager, ScriptedEngine, Spool, String) {
        try FileManager.default.createDirectory(atPath: directory.path + "/state", withIntermediateDirectories: true)
        let journal = try Journal(directory: directory.path + "/state", logger: logger)
        var configuration = CoreConfiguration()
        configuration.maxConcurrentTransfers = 1
        configuration.allowedRoots = AllowedRoots([directory.path])
        let spool = try Spool(directory: directory.path + "/state/spool", quota: .init(perUser: 1 << 30, total: 1 << 30))
        let engine = ScriptedEngine()
        let manager = try TransferManager(journal: journal, engine: engine, configuration: configuration, logger: logger, spool: spool)
        let source = directory.file("source")
        FileManager.default.createFile(atPath: source, contents: Data(repeating: 7, count: 1000))
        return (manager, engine, spool, source)
    }

    private func upload(_ name: String, _ extra: (inout Submit.Params) -> Void = { _ in }) -> Submit.Params {
        var params = Submit.Params(url: "http://127.0.0.1:9/up", destination: nil, kind: "upload", source: "/x/source", spool: name, method: "post")
        extra(&params)
        return params
    }

    @Test func anUploadClaimsItsCopyOnceAndTheEngineGetsItsPlan() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine, spool, source) = try setUp(directory)
        let entry = try spool.ingest(path: source, owner: 1000)
        let job = try await manager.submit(upload(entry.name), owner: 1000)
        #expect(job.kind == .upload && job.method == "POST" && job.totalBytes == 1000 && job.sha256 == entry.sha256)
        #expect(job.destination == "" && job.bytesSent == 0 && job.source == "/x/source")
        try await eventually("the start") { !engine.started.isEmpty }
        guard case .upload(let plan)? = engine.started.first?.kind else {
            Issue.record("the upload was not started as an upload")
            return
        }
        #expect(plan.spoolPath == spool.path(of: entry.name) && plan.method == "POST" && plan.size == 1000)
        #expect(plan.contentDigest.hasPrefix("sha-256=:") && plan.contentDigest.hasSuffix("=:"))
        await #expect(throws: CoreError.self) { _ = try await manager.submit(self.upload(entry.name), owner: 1000) }

        Task { await manager.run() }
        engine.report(.uploaded(jobID: job.id, bytes: 1000, response: UploadResponse(status: 201, location: "/x")))
        try await eventually("the end") { try await manager.status(id: job.id, states: nil, caller: 1000).first?.state == .completed }
        let finished = try #require(try await manager.status(id: job.id, states: nil, caller: 1000).first)
        #expect(finished.response?.location == "/x" && finished.bytesSent == 1000)
        // Once the record of the end is on disk: the status shows the end before that.
        try await eventually("the copy is freed") { !FileManager.default.fileExists(atPath: spool.path(of: entry.name)) }
        #expect(spool.bytesHeld() == 0)
    }

    @Test func theCopyStaysUntilTheRecordOfTheEndIsOnDisk() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine, spool, source) = try setUp(directory)
        let entry = try spool.ingest(path: source, owner: 1000)
        let job = try await manager.submit(upload(entry.name), owner: 1000)
        Task { await manager.run() }
        try await eventually("the start") { !engine.started.isEmpty }
        let journal = await manager.journal
        try await journal.sync()
        // The journal's writer hangs from now on, as on a disk whose writes do: the record of the
        // end waits, as it does until its sync when the daemon is killed.
        let stall = DispatchSemaphore(value: 0)
        defer { stall.signal() }
        // Held once the writer runs the stall, so that a write already under way cannot take the end.
        await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
            journal.stallWriterForTesting {
                held.resume()
                stall.wait()
            }
        }
        engine.report(.uploaded(jobID: job.id, bytes: 1000, response: UploadResponse(status: 201, location: "/x")))
        try await eventually("the end") { try await manager.status(id: job.id, states: nil, caller: 1000).first?.state == .completed }
        #expect(
            FileManager.default.fileExists(atPath: spool.path(of: entry.name)),
            "a crash now would bring the upload back unfinished: it needs its copy to send it again")
        #expect(spool.bytesHeld(by: 1000) == 1000)
        // A subscriber that comes now has the end replayed once it is on disk, and the copy gone.
        let subscribing = Task { try await manager.subscribe(Subscribe.Params(ids: [job.id]), caller: 1000, queueLimit: 100) }
        stall.signal()
        _ = try await subscribing.value
        #expect(!FileManager.default.fileExists(atPath: spool.path(of: entry.name)), "the replayed end comes after the copy is freed")
        #expect(spool.bytesHeld(by: 1000) == 0)
    }

    @Test func wrongKindsOfParametersAreRefusedNamingThem() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _, spool, source) = try setUp(directory)
        let entry = try spool.ingest(path: source, owner: 1000)
        let cases: [(Submit.Params, String)] = [
            (Submit.Params(url: "http://127.0.0.1:9/d", destination: nil), "destination"),
            (Submit.Params(url: "http://127.0.0.1:9/d", destination: directory.file("d"), method: "PUT"), "method"),
            (upload(entry.name) { $0.destination = directory.file("d") }, "destination"),
            (upload(entry.name) { $0.kind = "sideload" }, "kind"),
            (upload(entry.name) { $0.method = "DELETE" }, "method"),
            (upload(entry.name) { $0.spool = nil }, "source"),
            (upload(entry.name) { $0.sha256 = String(repeating: "a", count: 64) }, "sha256"),
        ]
        for (params, parameter) in cases {
            do {
                _ = try await manager.submit(params, owner: 1000)
                Issue.record("accepted: \(params)")
            } catch {
                #expect(error.kind == .invalidParameter(parameter), "\(error.message)")
            }
        }
        #expect(spool.bytesHeld() == 0, "a copy whose digest is not the expected one is freed")
    }

    @Test func anotherUsersCopyCannotBeSubmittedAndACancelFreesTheCopy() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, _, spool, source) = try setUp(directory)
        let mine = try spool.ingest(path: source, owner: 1000)
        await #expect(throws: CoreError.self) { _ = try await manager.submit(self.upload(mine.name), owner: 1001) }
        let first = try await manager.submit(upload(try spool.ingest(path: source, owner: 1000).name), owner: 1000)
        let second = try await manager.submit(upload(mine.name), owner: 1000)
        #expect(first.state == .queued && second.state == .queued)
        _ = try await manager.cancel(id: second.id, caller: 1000)
        #expect(!FileManager.default.fileExists(atPath: spool.path(of: mine.name)))
        #expect(spool.bytesHeld(by: 1000) == 1000, "only the first job's copy is held")
    }

    @Test func aJournalRecordFromBeforeUploadsIsADownload() throws {
        let json = #"{"id":"a","order":1,"state":"queued","url":"http://h/a","destination":"/tmp/a","headers":{},"overwrite":false,"owner":0,"id_chosen_by_client":false,"created_at":"2026-11-22T10:00:00.000Z","attempts":0,"checkpoint_bytes":0}"#
        let record = try WireCoding.decoder().decode(JobRecord.self, from: Data(json.utf8))
        #expect(!record.isUpload)
        #expect(record.wireJob().kind == .download && record.wireJob().bytesSent == nil)
    }
}
