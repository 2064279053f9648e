import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("transferctl")
struct TransferctlTests {
    @Test func submitWaitStatusAndCancelAgainstARealDaemon() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 31, size: 1 << 20)
        server.serve("/c.bin", content: content)
        try await daemon.start()
        let destination = daemon.destination("c.bin")
        let submitted = try await runTransferctl(["submit", "--socket", daemon.socketPath, server.url("/c.bin"), destination, "--wait"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!id.isEmpty)
        #expect(try sha256Hex(ofFile: destination) == content.sha256Hex())

        let status = try await runTransferctl(["status", "--json", id], environment: ["TRANSFERD_SOCKET": daemon.socketPath])
        #expect(status.status == 0)
        let job = try WireCoding.decoder().decode(Job.self, from: Data(status.stdout.utf8))
        #expect(job.state == .completed)

        let table = try await runTransferctl(["--socket", daemon.socketPath, "status"])
        #expect(table.stdout.contains("STATE") && table.stdout.contains(id))

        let cancel = try await runTransferctl(["cancel", "--socket", daemon.socketPath, id])
        #expect(cancel.status == 4, "cancelling a finished job is refused")
        #expect(cancel.stderr.contains("completed"))

        let missing = try await runTransferctl(["submit", "--socket", daemon.socketPath, server.url("/nothing"), daemon.destination("n"), "--wait"])
        #expect(missing.status == 1, "a failed job exits 1 with --wait")
        try await server.shutdown()
    }

    @Test func statusShowsTheNewest50AndSaysHowManyMoreThereAre() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        // Nothing listens on port 9: the jobs wait for their next attempt and stay listed.
        let list = daemon.destination("urls.txt")
        try (0..<60).map { "http://127.0.0.1:9/f\($0)\n" }.joined().write(toFile: list, atomically: true, encoding: .utf8)
        let submitted = try await runTransferctl(["--socket", daemon.socketPath, "submit", "-i", list, "-d", daemon.destination("out"), "--create-dirs"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let ids = submitted.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) }
        #expect(ids.count == 60)

        let table = try await runTransferctl(["--socket", daemon.socketPath, "status"])
        let rows = table.stdout.split(separator: "\n").dropFirst()
        #expect(rows.count == 50 && rows.first?.hasPrefix(ids[10]) == true && rows.last?.hasPrefix(ids[59]) == true, "\(table.stdout)")
        #expect(table.stderr.contains("10 older jobs not shown (60 in all)"), "\(table.stderr)")

        let three = try await runTransferctl(["--socket", daemon.socketPath, "status", "--limit", "3", "--json"])
        let newest = try three.stdout.split(separator: "\n").map { try WireCoding.decoder().decode(Job.self, from: Data($0.utf8)).id }
        #expect(newest == Array(ids.suffix(3)))

        let every = try await runTransferctl(["--socket", daemon.socketPath, "status", "--all-jobs", "--json"])
        #expect(every.stdout.split(separator: "\n").count == 60 && every.stderr.isEmpty, "\(every.stderr)")
    }

    @Test func withoutADaemonItSaysWhereItLookedAndExits3() async throws {
        let result = try await runTransferctl(["status", "--socket", "/tmp/transferd-test-nothing-here.sock"])
        #expect(result.status == 3)
        #expect(result.stderr.contains("/tmp/transferd-test-nothing-here.sock"))
        #expect(result.stderr.contains("transferd"))
    }

    @Test func usageErrorsExit2() async throws {
        #expect(try await runTransferctl(["submit"]).status == 2)
        #expect(try await runTransferctl(["status", "--state", "bogus"]).status == 2)
        #expect(try await runTransferctl(["--help"]).status == 0)
    }
}
