import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// `transferctl wait` and `watch` outlive a daemon restart, whether it was killed (`kill -9`) or
/// stopped cleanly: they connect again and continue from the last event they saw, saying so on
/// stderr, and show every event once.
@Suite("wait and watch across daemon restarts")
struct ReconnectTests {
    @Test func waitAndWatchContinueAcrossAKillAndACleanStop() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let gate = ServerGate()
        let content = TestContent(seed: 42, size: 1 << 20)
        server.serve("/r.bin", content: content, behaviour: .holdAfter(bytes: 256 << 10, until: gate))
        server.serve("/m.bin", content: TestContent(seed: 43, size: 1024))
        try await daemon.start()
        let destination = daemon.destination("r.bin")
        _ = try daemon.submit(server.url("/r.bin"), to: destination, id: "r")

        let subscriptions = { MetricsTests.value(try daemon.client().call(MetricsMethod.self, .init()).text, "transferd_subscribers") ?? 0 }
        let before = try subscriptions()
        let socket = ["--socket", daemon.socketPath]
        let wait = try RunningCommand(Binaries.transferctl, ["wait", "r", "--json"] + socket)
        defer { wait.kill9() }
        let watch = try RunningCommand(Binaries.transferctl, ["watch", "--json"] + socket)
        defer { watch.kill9() }
        // wait reports the job's replayed state once it has subscribed; watch shows a job submitted
        // after it has, and says nothing before: the daemon's count of subscriptions tells.
        try await waitUntil("wait to subscribe") { !wait.stderr.isEmpty }
        try await waitUntil("watch to subscribe") { try subscriptions() >= before + 2 }
        _ = try daemon.submit(server.url("/m.bin"), to: daemon.destination("m.bin"), id: "m1")
        try await waitUntil("watch to show m1") { watch.stdout.contains(#""id":"m1""#) }

        daemon.kill9()
        try await daemon.start()
        try await waitUntil("both to reconnect after kill -9") {
            wait.stderr.contains("reconnected to transferd") && watch.stderr.contains("reconnected to transferd")
        }
        #expect(wait.stderr.contains("lost the connection to transferd"), "\(wait.stderr)")

        // While they are connected again, a job that ends is seen; then a clean stop.
        _ = try daemon.submit(server.url("/m.bin"), to: daemon.destination("m2.bin"), id: "m2")
        try await waitUntil("watch to see m2 end") { watch.stdout.contains(#""type":"completed""#) && watch.stdout.contains(#""id":"m2""#) }
        #expect(daemon.terminate() == 0)
        try await daemon.start()
        try await waitUntil("both to reconnect after a clean stop") {
            wait.stderr.components(separatedBy: "reconnected to transferd").count == 3
                && watch.stderr.components(separatedBy: "reconnected to transferd").count == 3
        }

        gate.open()
        #expect(try await wait.exitStatus() == 0, "\(wait.stderr)")
        let finished = try WireCoding.decoder().decode(Job.self, from: Data(wait.stdout.utf8))
        #expect(finished.id == "r" && finished.state == .completed)
        #expect(try sha256Hex(ofFile: destination) == content.sha256Hex())

        try await waitUntil("watch to see r end") { Self.events(watch.stdout).contains { $0.job.id == "r" && $0.type == .completed } }
        watch.interrupt()
        _ = try await watch.exitStatus()
        let events = Self.events(watch.stdout)
        let seqs = events.map(\.seq)
        #expect(Set(seqs).count == seqs.count, "no event twice: \(seqs)")
        #expect(seqs == seqs.sorted(), "in order: \(seqs)")
        for id in ["r", "m1", "m2"] {
            #expect(events.filter { $0.job.id == id && $0.type == .completed }.count == 1, "\(id) ended once: \(watch.stdout)")
        }
        try await server.shutdown()
    }

    static func events(_ output: String) -> [JobEvent] {
        output.split(separator: "\n").compactMap { try? WireCoding.decoder().decode(JobEvent.self, from: Data($0.utf8)) }
    }
}
