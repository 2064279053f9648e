import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Priority classes and `move` against a real daemon, transferctl and the test HTTP server.
@Suite("Priorities")
struct PriorityIntegrationTests {
    @Test func aForegroundSubmitStartsNextAheadOfQueuedNormalJobs() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let gate = ServerGate()
        let contents = (0...6).map { TestContent(seed: UInt64(1800 + $0), size: 256 << 10) }
        // Every transfer holds after its first bytes until the gate opens: nothing ends on its own.
        for (index, name) in ["blocker", "n1", "n2", "n3", "n4", "n5", "fg"].enumerated() {
            server.serve("/\(name)", content: contents[index], behaviour: .holdAfter(bytes: 16 << 10, until: gate))
        }
        let socket = ["--socket", daemon.socketPath]
        _ = try daemon.submit(server.url("/blocker"), to: daemon.destination("blocker"), id: "blocker")
        try await waitUntil("the blocker to run") { try daemon.job("blocker").state == .running }
        for name in ["n1", "n2", "n3", "n4", "n5"] {
            _ = try daemon.submit(server.url("/\(name)"), to: daemon.destination(name), id: name)
        }
        let submitted = try await runTransferctl(
            socket + ["submit", server.url("/fg"), daemon.destination("fg"), "--id", "fg", "--priority", "foreground"])
        #expect(submitted.status == 0 && submitted.stdout == "fg\n", "\(submitted.stdout)\(submitted.stderr)")
        let table = try await runTransferctl(socket + ["status"])
        #expect(table.stdout.contains("PRIORITY") && table.stdout.contains("foreground"), "\(table.stdout)")
        let json = try await runTransferctl(socket + ["status", "fg", "--json"])
        #expect(json.stdout.contains(#""priority":"foreground""#), "\(json.stdout)")

        // n5 moves ahead of the other normal jobs; the foreground job still goes first.
        let moved = try await runTransferctl(socket + ["move", "n5", "--first"])
        #expect(moved.status == 0 && moved.stdout == "moved n5\n", "\(moved.stdout)\(moved.stderr)")
        let badMove = try await runTransferctl(socket + ["move", "n1", "--before", "fg"])
        #expect(badMove.status == 4 && badMove.stderr.contains("transferctl priority n1 foreground"), "\(badMove.stderr)")
        let missing = try await runTransferctl(socket + ["priority", "nope", "background"])
        #expect(missing.status == 4 && missing.stderr.contains("no such job: nope"), "\(missing.stderr)")
        let usage = try await runTransferctl(socket + ["priority", "n1", "urgent"])
        #expect(usage.status == 2 && usage.stderr.contains("foreground, normal or background"), "\(usage.stderr)")

        _ = try daemon.client().call(Cancel.self, .init(id: "blocker"))
        try await waitUntil("the next job to run") { try daemon.jobs().contains { $0.id != "blocker" && $0.state == .running } }
        #expect(try daemon.job("fg").state == .running)
        #expect(try ["n1", "n2", "n3", "n4", "n5"].allSatisfy { try daemon.job($0).state == .queued })
        #expect(server.requests(for: "/n1").isEmpty && server.requests(for: "/n5").isEmpty)

        _ = try daemon.client().call(Cancel.self, .init(id: "fg"))
        try await waitUntil("n5 to run") { try daemon.job("n5").state == .running }
        #expect(server.requests(for: "/n1").isEmpty, "the moved job went first in its class")
        gate.open()
        for name in ["n1", "n2", "n3", "n4", "n5"] {
            #expect(try await daemon.waitForTerminal(name).state == .completed)
        }
        #expect(try sha256Hex(ofFile: daemon.destination("n3")) == contents[3].sha256Hex())
        let finished = try await runTransferctl(socket + ["priority", "n1", "background"])
        #expect(finished.status == 4 && finished.stderr.contains("completed"), "\(finished.stderr)")
        try await server.shutdown()
    }

    @Test func aBackgroundDownloadYieldsToANormalOneAndCompletesWithoutFetchingAgain() async throws {
        let server = try await TestHTTPServer.start()
        let checkpointBytes: Int64 = 8 << 20
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1, "checkpoint_bytes": checkpointBytes])
        defer { daemon.cleanUp() }
        let big = TestContent(seed: 1810, size: 96 << 20)
        let small = TestContent(seed: 1811, size: 1 << 20)
        // Held at a third until the normal job has ended, so a slow test cannot see it end first.
        let gate = ServerGate()
        server.serve("/bg", content: big, behaviour: .all(.trickle(bytesPerSecond: 24 << 20), .holdAfter(bytes: 32 << 20, until: gate)))
        server.serve("/normal", content: small, behaviour: .trickle(bytesPerSecond: 1 << 20))
        try await daemon.start()
        let socket = ["--socket", daemon.socketPath]
        let submitted = try await runTransferctl(
            socket + ["submit", server.url("/bg"), daemon.destination("bg"), "--id", "bg", "--priority", "background", "--sha256", big.sha256Hex()])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        try await waitUntil("a quarter of the background file", seconds: 120) { try daemon.job("bg").bytesReceived >= 24 << 20 }

        _ = try daemon.submit(.init(url: server.url("/normal"), destination: daemon.destination("normal"), id: "normal", sha256: small.sha256Hex()))
        let normal = try await daemon.waitForTerminal("normal")
        #expect(normal.state == .completed, "\(String(describing: normal.error))")
        gate.open()
        let background = try await daemon.waitForTerminal("bg", seconds: 240)
        #expect(background.state == .completed, "\(String(describing: background.error))")
        #expect(background.attempts == 2 && background.priority == .background)
        // The first attempt gave its slot up (the job's log says so, however briefly it waited).
        let attempts = try daemon.client().call(Log.self, .init(id: "bg")).attempts
        #expect(attempts.map(\.outcome) == [.yielded, .completed], "\(attempts)")
        #expect((attempts.first?.bytes ?? 0) >= 24 << 20)
        let normalEnd = try #require(normal.finishedAt)
        let backgroundStart = try #require(server.requests(for: "/bg").dropFirst().first, "the background job was fetched again")
        #expect(backgroundStart.header("Range")?.hasPrefix("bytes=") == true && backgroundStart.header("Range") != "bytes=0-", "\(String(describing: backgroundStart.header("Range")))")
        #expect(try #require(background.finishedAt) > normalEnd)
        #expect(try sha256Hex(ofFile: daemon.destination("bg")) == big.sha256Hex())
        let sent = server.bytesSent(for: "/bg")
        print("background yield: \(sent) bytes sent for \(big.size) (bound \(big.size + checkpointBytes))")
        #expect(sent <= big.size + checkpointBytes, "the server sent \(sent) bytes for a file of \(big.size)")
        try await server.shutdown()
    }
}
