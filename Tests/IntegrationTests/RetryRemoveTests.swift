import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Finished jobs can be retried, removed and cleaned out, and an ended id is never silently
/// answered with the old job.
@Suite("Retry, remove and clean")
struct RetryRemoveTests {
    /// A download that gets `kept` bytes, then meets a server answering 503 until it fails; the
    /// server is left answering 503.
    private func failedHalfway(
        _ server: TestHTTPServer, _ daemon: TestDaemon, content: TestContent, kept: Int64
    ) async throws -> Job {
        let gate = ServerGate()
        server.serve("/flaky", content: content, behaviour: .all(.holdAfter(bytes: kept, until: gate), .dropAfter(bytes: kept)))
        var params = Submit.Params(url: server.url("/flaky"), destination: daemon.destination("flaky.bin"), id: "flaky")
        params.retry = RetryLimits(maxAttempts: 2)
        let job = try daemon.submit(params)
        try await waitUntil("the first \(kept) bytes to be sent", seconds: 60) { server.bytesSent(for: "/flaky") >= kept }
        server.serve("/flaky", content: content, behaviour: .status(code: 503, times: 1_000, retryAfter: "1"))
        gate.open()
        let failed = try await daemon.waitForTerminal(job.id)
        #expect(failed.state == .failed, "\(String(describing: failed.error))")
        return failed
    }

    @Test func aFailedDownloadRetriedAfterTheServerRecoversKeepsItsBytes() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["checkpoint_bytes": 1 << 20])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let content = TestContent(seed: 1601, size: 8 << 20)
        let failed = try await failedHalfway(server, daemon, content: content, kept: 3 << 20)
        #expect(failed.bytesReceived >= 2 << 20, "the checkpoint before the drop: \(failed.bytesReceived)")
        let partials = try daemon.outputFiles().filter { $0.hasSuffix(".part") }
        #expect(partials.count == 1, "a failed download that can resume keeps its partial file: \(partials)")

        server.serve("/flaky", content: content)
        let before = server.bytesSent(for: "/flaky")
        let requestsBefore = server.requests(for: "/flaky").count
        let retried = try await runTransferctl(["--socket", daemon.socketPath, "retry", "flaky"])
        #expect(retried.status == 0 && retried.stdout == "queued flaky\n", "\(retried.stdout)\(retried.stderr)")
        let done = try await daemon.waitForTerminal("flaky")
        #expect(done.state == .completed, "\(String(describing: done.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("flaky.bin")) == content.sha256Hex())
        let fetchedAgain = server.bytesSent(for: "/flaky") - before
        #expect(fetchedAgain <= content.size - failed.bytesReceived, "the retry fetched \(fetchedAgain) bytes; \(failed.bytesReceived) were kept")
        let firstAgain = server.requests(for: "/flaky").dropFirst(requestsBefore).first?.header("Range")
        #expect(firstAgain?.hasPrefix("bytes=\(failed.bytesReceived)-") == true, "\(String(describing: firstAgain))")

        let again = try await runTransferctl(["--socket", daemon.socketPath, "retry", "flaky"])
        #expect(again.status == 4 && again.stderr.contains("completed") && again.stderr.contains("--replace"), "\(again.stderr)")
        try await server.shutdown()
    }

    @Test func removeForgetsAFailedJobWithItsPartialFile() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["checkpoint_bytes": 1 << 20])
        defer { daemon.cleanUp() }
        try await daemon.start()
        _ = try await failedHalfway(server, daemon, content: TestContent(seed: 1602, size: 4 << 20), kept: 2 << 20)
        #expect(try daemon.outputFiles().contains { $0.hasSuffix(".part") })
        let removed = try await runTransferctl(["--socket", daemon.socketPath, "remove", "flaky"])
        #expect(removed.status == 0 && removed.stdout == "removed flaky\n", "\(removed.stdout)\(removed.stderr)")
        #expect(try daemon.outputFiles().isEmpty, "the partial file went with the job")
        let status = try await runTransferctl(["--socket", daemon.socketPath, "status", "flaky"])
        #expect(status.status == 4 && status.stderr.contains("no such job"))
        let running = try daemon.submit("http://127.0.0.1:9/never", to: daemon.destination("never"))
        let refused = try await runTransferctl(["--socket", daemon.socketPath, "remove", running.id])
        #expect(refused.status == 4 && refused.stderr.contains("cancel it first"), "\(refused.stderr)")
        try await server.shutdown()
    }

    @Test func anEndedIdIsRefusedWithoutReplaceAndStartsAgainWithIt() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let content = TestContent(seed: 1603, size: 256 << 10)
        server.serve("/nightly", content: content)
        let arguments = ["--socket", daemon.socketPath, "submit", server.url("/nightly"), daemon.destination("nightly.bin"), "--id", "nightly"]
        let first = try await runTransferctl(arguments + ["--wait"])
        #expect(first.status == 0, "\(first.stderr)")
        let finishedAt = try daemon.job("nightly").finishedAt

        let refused = try await runTransferctl(arguments)
        #expect(refused.status == 4, "\(refused.stdout)")
        #expect(refused.stderr.contains("already exists and completed") && refused.stderr.contains("--replace"), "\(refused.stderr)")

        let replaced = try await runTransferctl(arguments + ["--replace", "--overwrite", "--wait"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        let job = try daemon.job("nightly")
        #expect(job.state == .completed && job.finishedAt != finishedAt)
        #expect(server.requests(for: "/nightly").count == 2)
        try await server.shutdown()
    }

    @Test func cleanForgetsFinishedJobsAndTheirUnacknowledgedEvents() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let content = TestContent(seed: 1604, size: 64 << 10)
        server.serve("/a", content: content)
        for name in ["one", "two"] {
            var params = Submit.Params(url: server.url("/a"), destination: daemon.destination(name))
            params.session = "nightly"
            _ = try await daemon.waitForTerminal(try daemon.submit(params).id)
        }
        let waiting = try daemon.submit("http://127.0.0.1:9/never", to: daemon.destination("never"))
        _ = try daemon.client().call(Cancel.self, .init(id: waiting.id))

        let cancelled = try await runTransferctl(["--socket", daemon.socketPath, "clean", "--state", "cancelled"])
        #expect(cancelled.status == 0 && cancelled.stdout == "removed 1 finished job\n", "\(cancelled.stdout)\(cancelled.stderr)")
        let young = try await runTransferctl(["--socket", daemon.socketPath, "clean", "--older-than", "1h"])
        #expect(young.stdout == "removed 0 finished jobs\n", "\(young.stdout)")
        let rest = try await runTransferctl(["--socket", daemon.socketPath, "clean"])
        #expect(rest.stdout == "removed 2 finished jobs\n" && rest.stderr.contains("2 of them had an end their session had not acknowledged"), "\(rest.stdout)\(rest.stderr)")
        #expect(try daemon.jobs().isEmpty)
        // The session's ends are gone with the jobs: nothing is replayed.
        let events = try await runTransferctl(["--socket", daemon.socketPath, "events", "--session", "nightly"])
        #expect(events.status == 0 && events.stdout.isEmpty, "\(events.stdout)")
        let everyone = try await runTransferctl(["--socket", daemon.socketPath, "clean", "--state", "running"])
        #expect(everyone.status == 2, "only finished states: \(everyone.stderr)")
        try await server.shutdown()
    }
}
