import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("transferctl wait, watch and events")
struct WaitWatchEventsTests {
    private func transferctl(_ daemon: TestDaemon, _ arguments: [String]) throws -> RunningCommand {
        try RunningCommand(Binaries.transferctl, arguments, environment: ["TRANSFERD_SOCKET": daemon.socketPath])
    }

    @Test func waitExitsZeroOnlyWhenEveryJobCompleted() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/ok", content: TestContent(seed: 1, size: 100_000))
        server.serve("/slow", content: TestContent(seed: 2, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 10_000))
        try await daemon.start()
        let completed = try daemon.submit(server.url("/ok"), to: daemon.destination("ok")).id
        let failed = try daemon.submit(server.url("/missing"), to: daemon.destination("missing")).id
        let cancelled = try daemon.submit(server.url("/slow"), to: daemon.destination("slow")).id

        let waitingForCancel = try transferctl(daemon, ["wait", cancelled])
        try await waitUntil("wait to report the running job") { waitingForCancel.stderr.contains("job \(cancelled): running") }
        _ = try daemon.client().call(Cancel.self, .init(id: cancelled))
        #expect(try await waitingForCancel.exitStatus() == 1)
        #expect(waitingForCancel.stderrLines.last == "transferctl: job \(cancelled) was cancelled")

        let ok = try transferctl(daemon, ["wait", completed])
        #expect(try await ok.exitStatus() == 0, "\(ok.stderr)")
        let bad = try transferctl(daemon, ["wait", failed])
        #expect(try await bad.exitStatus() == 1)
        #expect(bad.stderrLines.last?.hasPrefix("transferctl: job \(failed) failed: the server answered 404") == true, "\(bad.stderr)")
        let mixed = try transferctl(daemon, ["wait", "--json", completed, failed])
        #expect(try await mixed.exitStatus() == 1)
        let finals = try mixed.stdoutLines.map { try WireCoding.decoder().decode(Job.self, from: Data($0.utf8)) }
        #expect(finals.map(\.id) == [completed, failed])
        #expect(finals.map(\.state) == [.completed, .failed])
        let unknown = try transferctl(daemon, ["wait", "no-such-job"])
        #expect(try await unknown.exitStatus() == 4)
        try await server.shutdown()
    }

    @Test func waitWritesOneLinePerStateChangeWhenNotOnATerminal() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1, "retry_initial_delay_seconds": 0])
        defer { daemon.cleanUp() }
        server.serve("/blocker", content: TestContent(seed: 3, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 10_000))
        server.serve("/busy", content: TestContent(seed: 4, size: 1 << 20), behaviour: .status(code: 503, times: 1, retryAfter: "1"))
        try await daemon.start()
        let blocker = try daemon.submit(server.url("/blocker"), to: daemon.destination("blocker")).id
        let job = try daemon.submit(server.url("/busy"), to: daemon.destination("busy"), id: "busy").id

        let wait = try transferctl(daemon, ["wait", job])
        try await waitUntil("wait to report the queued job") { wait.stderrLines == ["job busy: queued"] }
        _ = try daemon.client().call(Cancel.self, .init(id: blocker))
        #expect(try await wait.exitStatus() == 0, "\(wait.stderr)")
        let lines = wait.stderrLines
        #expect(lines.count == 6, "\(lines)")
        #expect(lines.first == "job busy: queued")
        #expect(lines.dropFirst().first == "job busy: running")
        let waiting = lines.dropFirst(2).first ?? ""
        #expect(waiting.hasPrefix("job busy: waiting (attempt 1 failed: the server answered 503"), "\(waiting)")
        #expect(waiting.hasSuffix("; next attempt in 1s)") || waiting.hasSuffix("; next attempt in 0s)"), "\(waiting)")
        #expect(lines.dropFirst(3).first == "job busy: queued", "due again after the wait")
        #expect(lines.dropFirst(4).first == "job busy: running (attempt 2)")
        #expect(lines.last?.hasPrefix("job busy completed: 1.0 MiB in ") == true, "\(lines)")
        #expect(wait.stdout.isEmpty)
        try await server.shutdown()
    }

    @Test func watchJSONPrintsEveryEventAsOneLineOfJSON() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/file", content: TestContent(seed: 5, size: 600_000), behaviour: .trickle(bytesPerSecond: 250_000))
        try await daemon.start()
        let watch = try transferctl(daemon, ["watch", "--json", "--session", "w"])
        defer { watch.kill9() }
        // Nothing is printed before the first event: probe with jobs of the session until one shows.
        try await waitUntil("watch to subscribe") {
            _ = try daemon.submit(.init(url: server.url("/probe"), destination: daemon.destination("probe-\(UUID().uuidString)"), session: "w"))
            return !watch.stdout.isEmpty
        }
        _ = try daemon.submit(.init(url: server.url("/file"), destination: daemon.destination("other"), session: "other"))
        let id = try daemon.submit(.init(url: server.url("/file"), destination: daemon.destination("file"), session: "w")).id
        try await waitUntil("watch to print the job's end") { watch.stdout.contains(#""type":"completed""#) }

        var lastSeq: UInt64 = 0
        var types: [JobEventType] = []
        for line in watch.stdoutLines {
            let event = try WireCoding.decoder().decode(JobEvent.self, from: Data(line.utf8))
            #expect(event.seq > lastSeq, "sequence numbers increase line by line")
            lastSeq = event.seq
            #expect(event.job.session == "w", "only the session's jobs")
            if event.job.id == id { types.append(event.type) }
        }
        #expect(Array(types.prefix(2)) == [.queued, .started], "\(types)")
        #expect(types.last == .completed)
        #expect(types.dropFirst(2).dropLast().allSatisfy { $0 == .progress } && types.count > 3, "\(types)")
        try await server.shutdown()
    }

    @Test func eventsPrintsWhatTheSessionMissedAndAckStopsTheRepeats() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/ok", content: TestContent(seed: 6, size: 10_000))
        try await daemon.start()
        let submit = try await runTransferctl(["submit", "--socket", daemon.socketPath, "--session", "cron", "--id", "good", server.url("/ok"), daemon.destination("good")])
        #expect(submit.status == 0, "\(submit.stderr)")
        let bad = try daemon.submit(.init(url: server.url("/missing"), destination: daemon.destination("bad"), id: "bad", session: "cron")).id
        _ = try await daemon.waitForTerminal("good")
        _ = try await daemon.waitForTerminal(bad)

        let first = try await runTransferctl(["events", "--socket", daemon.socketPath, "--session", "cron"])
        #expect(first.status == 1, "a failed job was printed: \(first.stderr)")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.contains { $0.range(of: #"^\d+ completed good .*/good$"#, options: .regularExpression) != nil }, "\(lines)")
        #expect(lines.contains { $0.range(of: #"^\d+ failed bad .*/bad: the server answered 404"#, options: .regularExpression) != nil }, "\(lines)")

        let acked = try await runTransferctl(["events", "--socket", daemon.socketPath, "--session", "cron", "--ack", "--json"])
        #expect(acked.status == 1, "the failure is still among what it printed")
        #expect(acked.stdout.split(separator: "\n").count == 2)
        #expect(acked.stderr.contains("acknowledged 2 events"), "\(acked.stderr)")
        let after = try await runTransferctl(["events", "--socket", daemon.socketPath, "--session", "cron"])
        #expect(after.status == 0, "nothing printed, nothing failed")
        #expect(after.stdout.isEmpty, "\(after.stdout)")
        try await server.shutdown()
    }
}
