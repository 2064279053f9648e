import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Downloads")
struct DownloadTests {
    @Test func submitCompletesWithTheSourceDigest() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1, size: 3 << 20 + 123)
        server.serve("/file.bin", content: content)
        try await daemon.start()
        let destination = daemon.destination("file.bin")
        let job = try daemon.submit(server.url("/file.bin"), to: destination)
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.bytesReceived == content.size)
        #expect(finished.totalBytes == content.size)
        #expect(finished.attempts == 1)
        #expect(finished.startedAt != nil && finished.finishedAt != nil)
        #expect(try sha256Hex(ofFile: destination) == content.sha256Hex())
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/out")
        #expect(leftovers == ["file.bin"], "no partial file is left")
        let request = try #require(server.requests(for: "/file.bin").first)
        #expect(request.header("Accept-Encoding") == "identity")
        try await server.shutdown()
    }

    @Test func emptyAndOddSizedFilesLandExactly() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let sizes: [Int64] = [0, 1, 4 << 20, (4 << 20) + 1, (12 << 20) - 1]
        for (index, size) in sizes.enumerated() {
            server.serve("/s\(index)", content: TestContent(seed: UInt64(40 + index), size: size))
        }
        try await daemon.start()
        var ids: [String] = []
        for index in sizes.indices {
            ids.append(try daemon.submit(server.url("/s\(index)"), to: daemon.destination("s\(index)")).id)
        }
        for (index, id) in ids.enumerated() {
            let job = try await daemon.waitForTerminal(id)
            #expect(job.state == .completed, "\(sizes[index]) bytes: \(String(describing: job.error))")
            #expect(try sha256Hex(ofFile: daemon.destination("s\(index)")) == TestContent(seed: UInt64(40 + index), size: sizes[index]).sha256Hex())
        }
        try await server.shutdown()
    }

    @Test func withoutAValidatorTheFileIsFetchedInOnePieceNotStitched() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 50, size: 10 << 20)
        server.serve("/weak.bin", content: content, behaviour: .weakETagOnly)
        try await daemon.start()
        let job = try daemon.submit(server.url("/weak.bin"), to: daemon.destination("weak.bin"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed)
        #expect(try sha256Hex(ofFile: daemon.destination("weak.bin")) == content.sha256Hex())
        let ranges = server.requests(for: "/weak.bin").map { $0.header("Range") }
        #expect(ranges.last == .some(nil), "the last request asks for the whole file: \(ranges)")
        try await server.shutdown()
    }

    @Test func failedDownloadSaysWhyAndLeavesNothing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let destination = daemon.destination("missing.bin")
        let job = try daemon.submit(server.url("/missing.bin"), to: destination)
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .httpStatus)
        #expect(finished.error?.httpStatus == 404)
        #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/out").isEmpty)
        try await server.shutdown()
    }

    @Test func cancelStopsARunningTransferAndRemovesItsPartialFile() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/slow.bin", content: TestContent(seed: 2, size: 4 << 20), behaviour: .trickle(bytesPerSecond: 64 << 10))
        try await daemon.start()
        let job = try daemon.submit(server.url("/slow.bin"), to: daemon.destination("slow.bin"))
        try await waitUntil("bytes to arrive") { try daemon.job(job.id).bytesReceived > 0 }
        let cancelled = try daemon.client().call(Cancel.self, .init(id: job.id)).job
        #expect(cancelled.state == .cancelled)
        try await waitUntil("the partial file to go") {
            try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/out").isEmpty
        }
        #expect(throws: ControlClientError.self) { try daemon.client().call(Cancel.self, .init(id: job.id)) }
        do {
            _ = try daemon.client().call(Cancel.self, .init(id: job.id))
        } catch ControlClientError.rpc(let error) {
            #expect(error.code == .jobFinished)
            #expect(error.message.contains("cancelled"))
        }
        try await server.shutdown()
    }

    @Test func resubmittingWithTheSameIDIsIdempotent() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        // Held until the resubmits are done: the rule is about an unfinished job (an ended one's id
        // is refused as job_exists, RetryRemoveTests).
        let gate = ServerGate()
        server.serve("/a.bin", content: TestContent(seed: 3, size: 100_000), behaviour: .holdAfter(bytes: 0, until: gate))
        try await daemon.start()
        let destination = daemon.destination("a.bin")
        let first = try daemon.submit(server.url("/a.bin"), to: destination, id: "nightly-a")
        let again = try daemon.submit(server.url("/a.bin"), to: destination, id: "nightly-a")
        #expect(first.id == "nightly-a" && again.id == "nightly-a")
        #expect(try daemon.jobs().count == 1)
        do {
            _ = try daemon.submit(server.url("/other.bin"), to: destination, id: "nightly-a")
            Issue.record("a different request with the same id was accepted")
        } catch ControlClientError.rpc(let error) {
            #expect(error.code == .idConflict)
        }
        gate.open()
        try await daemon.waitForTerminal("nightly-a")
        try await server.shutdown()
    }

    @Test func queuedJobsRunAtMostTheConfiguredNumberAtOnceInOrder() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 2])
        defer { daemon.cleanUp() }
        for index in 0..<6 {
            server.serve("/f\(index)", content: TestContent(seed: UInt64(10 + index), size: 256 << 10), behaviour: .trickle(bytesPerSecond: 512 << 10))
        }
        try await daemon.start()
        var ids: [String] = []
        for index in 0..<6 {
            ids.append(try daemon.submit(server.url("/f\(index)"), to: daemon.destination("f\(index)")).id)
        }
        var maxRunning = 0
        try await waitUntil("all jobs to finish", seconds: 120) {
            let jobs = try daemon.jobs()
            maxRunning = max(maxRunning, jobs.filter { $0.state == .running }.count)
            return jobs.allSatisfy { $0.state == .completed }
        }
        #expect(maxRunning <= 2)
        let started = try ids.map { try #require(try daemon.job($0).startedAt) }
        #expect(started == started.sorted(), "jobs start in submission order")
        try await server.shutdown()
    }
}
