import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

/// Queued downloads replayed at start-up, or submitted behind a long queue, are kept light
/// (`QueuedJob`): their records stay in the journal until they start or anything asks for them,
/// and they behave as whole ones.
@Suite("Queued jobs kept light")
struct QueuedLightTests {
    func record(_ id: String, url: String = "https://Mirror.Example.org:8443/pub/file?x=%20y") -> JobRecord {
        var job = JobRecord(
            id: id, order: 7, state: .queued, url: url, destination: "/srv/in/\(id)", headers: [:], overwrite: false, owner: 1000,
            ownerGroup: 1000, idChosenByClient: false, createdAt: Date(timeIntervalSince1970: 1_795_000_000.5), attempts: 0, checkpointBytes: 0)
        job.detached = true
        return job
    }

    func scanned(_ job: JobRecord) throws -> QueuedJob? {
        try scannedWithHost(job)?.job
    }

    func scannedWithHost(_ job: JobRecord) throws -> (job: QueuedJob, host: String)? {
        try WireCoding.encoder().encode(job).withUnsafeBytes { JobSummaryScan.queued(of: $0) }
    }

    @Test func aQueuedDownloadScansToItsLightFormWithWhatSchedulingNeeds() throws {
        var job = record("a")
        job.priority = .background
        job.position = -3
        job.paused = true
        job.session = "nightly"
        job.label = "mirror"
        let (light, host) = try #require(try scannedWithHost(job))
        #expect(light.destination == job.destination)
        #expect(host == job.hostKey)
        #expect(light.priority == .background && light.position == -3 && light.queuePosition == job.queuePosition && light.paused)
        #expect(light.summary.order == 7 && light.summary.owner == 1000 && light.summary.session == "nightly" && light.summary.state == .queued)
        let plain = try #require(try scanned(record("b")))
        #expect(plain.priority == .normal && plain.position == nil && !plain.paused && plain.queuePosition == record("b").queuePosition)
    }

    @Test func aRecordHoldingMoreThanASubmittedDownloadIsDecodedInstead() throws {
        var later = record("start-time")
        later.notBefore = Date(timeIntervalSince1970: 1_900_000_000)
        var yielded = record("yielded")
        yielded.yielded = true
        var upload = record("upload")
        upload.kind = .upload
        var limits = record("limits")
        limits.retry = RetryLimits(maxAttempts: 2)
        var progress = record("progress")
        progress.totalBytes = 10
        var waiting = record("waiting")
        waiting.state = .waiting
        let escaped = record("escaped", url: "https://example.org/a \"b\"")
        let ftp = record("ftp", url: "ftp://example.org/a")
        var farthest = record("farthest")
        farthest.position = .min
        for job in [later, yielded, upload, limits, progress, waiting, escaped, ftp, farthest] {
            #expect(try scanned(job) == nil, "\(job.id)")
        }
    }

    /// The job table and the queue hold these for every queued job: a few bytes more each is a
    /// few megabytes more for a million.
    @Test func whatEveryQueuedJobHoldsStaysSmall() {
        #expect(MemoryLayout<QueuedJob>.stride == 88)
        #expect(MemoryLayout<QueueKey>.stride == 24)
        #expect(MemoryLayout<JobQueue.Entry>.stride == 56)
    }

    @Test func theHostIsReadAsTheRecordsURLGivesIt() {
        let urls = [
            "http://example.org/a", "https://User:secret@Example.ORG:8443/x", "http://127.0.0.1:8080", "https://a-b_c.example/?q#f",
            "http://host.example/%2Fpath?x=1&y=[2]",
        ]
        for url in urls {
            let job = record("x", url: url)
            #expect(QueuedJob.host(ofURL: url) == job.hostKey, "\(url)")
        }
        for url in ["http://[::1]:80/a", "http://ex%61mple.org/", "http://exa mple.org/", "http://example.org/a b", "file:///etc/passwd", "http://", "http://:80/"] {
            #expect(QueuedJob.host(ofURL: url) == nil, "\(url)")
        }
    }

    @Test func lightJobsStartInOrderWithTheirHeadersAndAnswerAsWholeOnes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var (manager, engine) = try await startedScriptedCore(in: directory, slots: 0)
        for id in ["a", "b", "c", "d", "e"] {
            var params = Submit.Params(url: "http://127.0.0.1:1/\(id)", destination: directory.file(id), id: id)
            params.headers = ["X-Job": id]
            _ = try await manager.submit(params, owner: 0)
        }
        await manager.shutdown()

        (manager, engine) = try await startedScriptedCore(in: directory, slots: 0)
        #expect(await manager.counts.queued == 5)
        for id in ["a", "b", "c", "d", "e"] { #expect(await manager.jobs.isLight(id), "\(id) is held light") }
        #expect(try await manager.status(id: nil, states: nil, caller: 0).map(\.id) == ["a", "b", "c", "d", "e"])
        _ = try await manager.pause(JobSelection(ids: ["b"]), caller: 0)
        _ = try await manager.cancel(id: "c", caller: 0)
        _ = try await manager.move(Move.Params(id: "e", first: true), caller: 0)
        let d = try #require(try await manager.status(id: "d", states: nil, caller: 0).first)
        #expect(d.state == .queued && d.destination == directory.file("d"))
        #expect(await manager.jobs.isLight("d"), "reading a job does not make it whole")
        await manager.shutdown()

        (manager, engine) = try await startedScriptedCore(in: directory, slots: 1)
        try await eventually("the first start") { engine.started.count == 1 }
        for (id, count) in [("e", 2), ("a", 3)] {
            engine.complete(id, bytes: 1)
            try await eventually("start \(count)") { engine.started.count == count }
        }
        #expect(engine.started.map(\.jobID) == ["e", "a", "d"])
        #expect(engine.started.map { $0.headers["X-Job"] } == ["e", "a", "d"], "the headers journaled apart come with each start")
        let paused = try #require(try await manager.status(id: "b", states: nil, caller: 0).first)
        #expect(paused.state == .queued && paused.paused == true)
        #expect(try await manager.status(id: "c", states: nil, caller: 0).first?.state == .cancelled)
        await manager.shutdown()
    }

    @Test func submitsBehindALongQueueAreHeldLightAndStartWithTheirHeaders() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (manager, engine) = try await startedScriptedCore(in: directory, slots: 1)
        let ahead = (0..<TransferManager.queuedHeldWhole).map {
            Submit.Params(url: "http://127.0.0.1:1/\($0)", destination: directory.file("f\($0)"), id: "f\($0)")
        }
        for answer in await manager.submit(ahead, owner: 0) { _ = try answer.get() }
        try await eventually("the first start") { engine.started.count == 1 }
        for id in ["x1", "x2", "x3"] {
            var params = Submit.Params(url: "http://127.0.0.1:1/\(id)", destination: directory.file(id), id: id)
            params.headers = ["X-Job": id]
            _ = try await manager.submit(params, owner: 0)
        }
        var held: [Bool] = []
        for id in ["f5", "x1", "x2", "x3"] { held.append(await manager.jobs.isLight(id)) }
        #expect(held == [false, false, true, true], "a queue of a thousand stays whole; what waits behind it is held light")
        let x2 = try #require(try await manager.status(id: "x2", states: nil, caller: 0).first)
        #expect(x2.state == .queued && x2.destination == directory.file("x2") && x2.headerNames == ["X-Job"])
        _ = try await manager.pause(JobSelection(ids: ["x3"]), caller: 0)
        _ = try await manager.move(Move.Params(id: "x2", first: true), caller: 0)
        engine.complete(engine.started[0].jobID, bytes: 1)
        try await eventually("the next start") { engine.started.count == 2 }
        #expect(engine.started[1].jobID == "x2" && engine.started[1].headers["X-Job"] == "x2", "the headers journaled apart come with the start")
        #expect(try await manager.status(id: "x3", states: nil, caller: 0).first?.paused == true)
        await manager.shutdown()
    }

    @Test func aLightJobWhoseHeadersThisVersionRefusesFailsWhenItWouldStart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
        var job = record("bad")
        job.url = "http://127.0.0.1:1/bad"
        job.destination = directory.file("bad")
        let encoder = WireCoding.encoder()
        let journal = try Journal(directory: directory.path, logger: logger)
        try await journal.commit([
            .put(key: job.journalKey, value: Array(try encoder.encode(job))),
            .put(key: job.requestKey, value: Array(#"{"headers":{"X-Bad":"a\r\nInjected: yes"}}"#.utf8)),
        ])
        let (manager, engine) = try await startedScriptedCore(in: directory, slots: 1)
        try await eventually("the job fails") { try await manager.status(id: "bad", states: nil, caller: 0).first?.state == .failed }
        let failed = try #require(try await manager.status(id: "bad", states: nil, caller: 0).first)
        #expect(failed.error?.code == .invalidJob && failed.error?.message.contains("submit it again") == true)
        #expect(engine.started.isEmpty)
        await manager.shutdown()
    }
}
