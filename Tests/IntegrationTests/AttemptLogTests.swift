import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// `transferctl log ID`: every attempt of a job, with how it ended and the wait that followed.
@Suite struct AttemptLogTests {
    @Test func everyAttemptIsListedWithItsErrorAndTheWaitThatFollowed() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 2501, size: 300_000)
        server.serve("/flaky", content: content, behaviour: .status(code: 503, times: 2, retryAfter: "1"))
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/flaky"), destination: daemon.destination("flaky")))
        #expect(try await daemon.waitForTerminal(job.id).state == .completed)

        let run = try await runTransferctl(["log", "--socket", daemon.socketPath, job.id])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "job \(job.id): completed, 3 attempts", "\(run.stdout)")
        #expect(lines.count == 4, "\(run.stdout)")
        #expect(lines[1].hasPrefix("#1 ") && lines[1].contains("retry: http_status (HTTP 503)") && lines[1].contains("next attempt after 1s"), "\(lines[1])")
        #expect(lines[2].hasPrefix("#2 ") && lines[2].contains("retry: http_status (HTTP 503)"), "\(lines[2])")
        #expect(lines[3].hasPrefix("#3 ") && lines[3].contains("KiB") && lines[3].hasSuffix("completed"), "\(lines[3])")

        let json = try await runTransferctl(["log", "--socket", daemon.socketPath, "--json", job.id])
        let result = try WireCoding.decoder().decode(Log.Result.self, from: Data(json.stdout.utf8))
        #expect(result.attempts.map(\.outcome) == [.retry, .retry, .completed])
        #expect(result.attempts.first?.httpStatus == 503)
        #expect(result.attempts.first?.nextAttemptAt != nil)
        #expect(result.attempts.last?.bytes == content.size)

        // The log survives a restart; another job's id or a missing one is refused as no job.
        daemon.kill9()
        try await daemon.start()
        let again = try daemon.client().call(Log.self, .init(id: job.id))
        #expect(again.attempts.count == 3)
        let missing = try await runTransferctl(["log", "--socket", daemon.socketPath, "no-such-job"])
        #expect(missing.status == 4, "\(missing.stderr)")
        try await server.shutdown()
    }
}
