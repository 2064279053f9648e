import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// `--not-before` holds a job back until its time, across a restart too; `--deadline` fails it
/// as `time_limit` once its time has passed.
@Suite("Start times and deadlines")
struct StartTimeTests {
    @Test func aJobWaitsForItsStartTimeAcrossARestart() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let content = TestContent(seed: 1701, size: 128 << 10)
        server.serve("/later", content: content)
        server.serve("/restart", content: content)

        let asked = Date()
        let submitted = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", server.url("/later"), daemon.destination("later"), "--not-before", "+6s", "--json",
        ])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(submitted.stdout.utf8))
        let notBefore = try #require(job.notBefore)
        // Six seconds from when it was submitted, however long the command took on a loaded machine.
        #expect(job.state == .queued && notBefore > asked.addingTimeInterval(5))
        let done = try await daemon.waitForTerminal(job.id)
        #expect(done.state == .completed)
        #expect(try #require(done.startedAt) >= notBefore.addingTimeInterval(-0.5), "started \(String(describing: done.startedAt)), not before \(notBefore)")

        // Durable: a job held back survives a restart and still waits for its time.
        var params = Submit.Params(url: server.url("/restart"), destination: daemon.destination("restart"))
        params.notBefore = Date().addingTimeInterval(4)
        let held = try daemon.submit(params)
        daemon.terminate()
        try await daemon.start()
        let replayed = try daemon.job(held.id)
        #expect(replayed.state == .queued && replayed.notBefore != nil, "\(replayed.state)")
        let finished = try await daemon.waitForTerminal(held.id)
        #expect(finished.state == .completed)
        // Held about 4 s: a start right after the restart would be seconds early. Times travel as
        // milliseconds, and the check leaves room for a loaded machine's timers.
        let kept = try #require(replayed.notBefore)
        #expect(try #require(finished.startedAt) >= kept.addingTimeInterval(-0.5), "started \(String(describing: finished.startedAt)), not before \(kept)")
        #expect(server.requests(for: "/restart").count >= 1)
        try await server.shutdown()
    }

    @Test func aJobNotDoneByItsDeadlineFailsAsTimeLimit() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        server.serve("/busy", content: TestContent(seed: 1702, size: 1 << 20), behaviour: .status(code: 503, times: 1_000, retryAfter: "1"))
        let started = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", server.url("/busy"), daemon.destination("busy"), "--deadline", "+3s", "--wait",
        ])
        #expect(started.status == 1, "\(started.stderr)")
        let job = try #require(try daemon.jobs().first)
        #expect(job.state == .failed && job.error?.code == .timeLimit, "\(String(describing: job.error))")
        #expect(job.error?.message.contains("deadline") == true, "\(String(describing: job.error))")

        let past = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", server.url("/busy"), daemon.destination("past"), "--deadline", "2020-01-01T00:00:00Z",
        ])
        #expect(past.status == 4 && past.stderr.contains("has passed already"), "\(past.stderr)")
        try await server.shutdown()
    }
}
