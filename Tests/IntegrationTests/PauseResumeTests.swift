import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `transferctl pause` and `resume` against a real daemon and the test HTTP server.
@Suite("Pause and resume")
struct PauseResumeTests {
    @Test func aPausedDownloadStaysPausedAcrossARestartAndResumesWithoutFetchingAgain() async throws {
        let server = try await TestHTTPServer.start()
        let checkpointBytes: Int64 = 8 << 20
        let daemon = try TestDaemon(configuration: ["checkpoint_bytes": checkpointBytes])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1701, size: 200 << 20)
        // The server stops a little past half way until the restart, so the pause lands mid-body
        // however slow the machine (the daemon asks for ranges of a few MiB: the hold is at an
        // offset of the file, not of a response).
        server.serve("/big", content: content, behaviour: .all(.trickle(bytesPerSecond: 40 << 20), .holdAt(offset: (100 << 20) + 4321, until: ServerGate())))
        try await daemon.start()
        let job = try daemon.submit(
            .init(url: server.url("/big"), destination: daemon.destination("big"), id: "big", sha256: content.sha256Hex()))
        try await waitUntil("30 % to arrive", seconds: 120) { try daemon.job(job.id).bytesReceived >= 60 << 20 }

        let paused = try await runTransferctl(["--socket", daemon.socketPath, "pause", "big"])
        #expect(paused.status == 0 && paused.stdout == "paused big\n", "\(paused.stdout)\(paused.stderr)")
        let held = try daemon.job("big")
        #expect(held.state == .queued && held.paused == true, "\(held)")
        #expect(held.bytesReceived >= 60 << 20, "the stop kept what was written: \(held.bytesReceived)")
        let table = try await runTransferctl(["--socket", daemon.socketPath, "status"])
        #expect(table.stdout.contains("paused"), "\(table.stdout)")
        let json = try await runTransferctl(["--socket", daemon.socketPath, "status", "big", "--json"])
        #expect(json.stdout.contains(#""paused":true"#), "\(json.stdout)")

        #expect(daemon.terminate() == 0)
        let requestsBefore = server.requests(for: "/big").count
        try await daemon.start()
        let afterRestart = try daemon.job("big")
        #expect(afterRestart.state == .queued && afterRestart.paused == true, "still paused after the restart: \(afterRestart)")
        #expect(afterRestart.bytesReceived == held.bytesReceived)
        #expect(server.requests(for: "/big").count == requestsBefore, "a paused job is not started on replay")

        server.serve("/big", content: content, behaviour: .trickle(bytesPerSecond: 80 << 20))
        let resumed = try await runTransferctl(["--socket", daemon.socketPath, "resume", "big"])
        #expect(resumed.status == 0 && resumed.stdout == "resumed big\n", "\(resumed.stdout)\(resumed.stderr)")
        let finished = try await daemon.waitForTerminal("big", seconds: 240)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("big")) == content.sha256Hex())
        let sent = server.bytesSent(for: "/big")
        print("200 MiB pause: \(held.bytesReceived) bytes kept at the pause, \(sent) sent in all (bound \(content.size + checkpointBytes))")
        #expect(sent <= content.size + checkpointBytes, "the server sent \(sent) bytes for a file of \(content.size)")
        let range = server.requests(for: "/big").dropFirst(requestsBefore).first?.header("Range")
        #expect(range?.hasPrefix("bytes=\(held.bytesReceived)-") == true, "\(String(describing: range))")
        try await server.shutdown()
    }

    @Test func aPausedQueuedJobIsHeldWhileOthersRunAndStartsWhenResumed() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let gate = ServerGate()
        let blocker = TestContent(seed: 1702, size: 1 << 20)
        let queuedContent = TestContent(seed: 1703, size: 256 << 10)
        server.serve("/blocker", content: blocker, behaviour: .holdAfter(bytes: 64 << 10, until: gate))
        server.serve("/queued", content: queuedContent)
        _ = try daemon.submit(server.url("/blocker"), to: daemon.destination("blocker"), id: "blocker")
        let queued = try daemon.submit(server.url("/queued"), to: daemon.destination("queued"), id: "queued")
        #expect(queued.state == .queued)

        let paused = try await runTransferctl(["--socket", daemon.socketPath, "pause", "queued"])
        #expect(paused.status == 0 && paused.stdout == "paused queued\n", "\(paused.stdout)\(paused.stderr)")
        gate.open()
        #expect(try await daemon.waitForTerminal("blocker").state == .completed)
        let stillHeld = try daemon.job("queued")
        #expect(stillHeld.state == .queued && stillHeld.paused == true && stillHeld.attempts == 0)
        #expect(server.requests(for: "/queued").isEmpty, "the slot freed did not go to the paused job")

        let resumed = try await runTransferctl(["--socket", daemon.socketPath, "resume", "queued"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try await daemon.waitForTerminal("queued").state == .completed)
        #expect(try sha256Hex(ofFile: daemon.destination("queued")) == queuedContent.sha256Hex())
        try await server.shutdown()
    }

    @Test(.enabled(if: getuid() == 0, "the daemon-wide hold is root's"))
    func pauseAllHoldsNewSubmitsUntilResumeAll() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        try await daemon.start(environment: ["NOTIFY_SOCKET": notify.address])
        let content = TestContent(seed: 1704, size: 128 << 10)
        server.serve("/later", content: content)

        let hold = try await runTransferctl(["--socket", daemon.socketPath, "pause", "--all"])
        #expect(hold.status == 0 && hold.stderr.contains("resume --all"), "\(hold.stdout)\(hold.stderr)")
        // The scheduler runs before submit answers: under the hold, the job is still queued.
        let job = try daemon.submit(server.url("/later"), to: daemon.destination("later"), id: "later")
        #expect(job.state == .queued && job.paused == nil)
        let status = try await runTransferctl(["--socket", daemon.socketPath, "status"])
        #expect(status.stderr.contains("holds all transfers"), "\(status.stderr)")
        try await waitUntil("STATUS= to say that transfers are held", seconds: 30) {
            notify.messages.contains { $0.fields["STATUS"]?.contains("1 queued, 0 waiting; new transfers held") == true }
        }

        #expect(daemon.terminate() == 0)
        try await daemon.start()
        #expect(try daemon.job("later").state == .queued, "the hold survives a restart")
        #expect(server.requests(for: "/later").isEmpty)

        let lift = try await runTransferctl(["--socket", daemon.socketPath, "resume", "--all"])
        #expect(lift.status == 0 && lift.stderr.contains("lifted"), "\(lift.stdout)\(lift.stderr)")
        #expect(try await daemon.waitForTerminal("later").state == .completed)
        let after = try await runTransferctl(["--socket", daemon.socketPath, "status"])
        #expect(!after.stderr.contains("holds all transfers"), "\(after.stderr)")
        try await server.shutdown()
    }

    @Test func pausingACompletedJobFailsWithExit4AndSaysWhy() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        server.serve("/done", content: TestContent(seed: 1705, size: 64 << 10))
        _ = try daemon.submit(server.url("/done"), to: daemon.destination("done"), id: "done")
        #expect(try await daemon.waitForTerminal("done").state == .completed)
        let refused = try await runTransferctl(["--socket", daemon.socketPath, "pause", "done"])
        #expect(refused.status == 4, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("done") && refused.stderr.contains("completed"), "\(refused.stderr)")
        let missing = try await runTransferctl(["--socket", daemon.socketPath, "resume", "nope"])
        #expect(missing.status == 4 && missing.stderr.contains("no such job: nope"), "\(missing.stderr)")
        let usage = try await runTransferctl(["--socket", daemon.socketPath, "pause"])
        #expect(usage.status == 2, "\(usage.stderr)")
        try await server.shutdown()
    }
}
