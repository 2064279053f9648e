import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Logging to the systemd journal: when the daemon chooses the journal, and what its lines carry
/// (the fields of an entry: Tests/TransferDaemonTests/JournalLogHandlerTests.swift).
@Suite("Journal logging")
struct JournalLoggingTests {
    /// With JOURNAL_STREAM naming its stderr, the daemon logs to the journal. Without a journald here,
    /// its entries fall back to stderr with the priority prefix journald reads.
    @Test func theDaemonLogsToTheJournalWhenJournalStreamNamesItsStderr() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        #expect(FileManager.default.createFile(atPath: daemon.logPath, contents: nil))
        var info = stat()
        #expect(stat(daemon.logPath, &info) == 0)
        try await daemon.start(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino)"])
        #expect(daemon.terminate() == 0)
        let log = daemon.log
        #expect(!log.contains("info transferd"), "no terminal lines: \(log)")
        if access("/run/systemd/journal/socket", F_OK) != 0 {
            #expect(log.contains("<6>ready "), "\(log)")
        }
    }

    @Test func aJournalStreamOfAnotherFileKeepsTerminalLines() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["JOURNAL_STREAM": "1:1"])
        #expect(daemon.terminate() == 0)
        #expect(daemon.log.contains("info transferd"), "\(daemon.log)")
    }

    /// A job's story, told by the lines that carry its id: an attempt that drops, the retry that
    /// resumes it, a stop for shutdown, the resume after the restart, checkpoints and the landing.
    @Test func everyLineAboutARetriedAndResumedDownloadCarriesTheJobID() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0, "checkpoint_bytes": 256 << 10])
        defer { daemon.cleanUp() }
        // The first answer drops after 1 MiB; the next holds after 2 MiB more until the daemon has restarted.
        let gate = ServerGate()
        let content = TestContent(seed: 1301, size: 6 << 20)
        server.serve("/story", content: content, behaviour: .all(.dropAfter(bytes: 1 << 20), .holdAfter(bytes: 2 << 20, until: gate)))
        try await daemon.start(arguments: ["--log-level", "debug"])
        let job = try daemon.submit(server.url("/story"), to: daemon.destination("story"))
        try await waitUntil("the retry to reach the hold") {
            let now = try daemon.job(job.id)
            return now.attempts == 2 && now.bytesReceived >= 3 << 20
        }
        #expect(daemon.terminate() == 0)
        gate.open()
        try await daemon.start(arguments: ["--log-level", "debug"])
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 3)
        #expect(daemon.terminate() == 0)

        let lines = daemon.log.split(separator: "\n").map(String.init)
        let tagged = lines.filter { $0.contains("job=\(job.id)") }
        func expectLine(_ message: String, _ metadata: String...) {
            let found = tagged.contains { line in line.contains(message) && metadata.allSatisfy { line.contains($0) } }
            #expect(found, "no line \"\(message)\" with job=\(job.id) \(metadata) in:\n\(daemon.log)")
        }
        expectLine("job accepted")
        expectLine("attempt started", "attempt=1")
        expectLine("checkpoint", "bytes=")
        expectLine("transfer interrupted", "attempt=1")
        expectLine("job waits to retry", "attempt=1")
        expectLine("retrying", "attempt=2")
        expectLine("attempt started", "attempt=2")
        expectLine("transfer resumed", "attempt=2", "bytes=\(1 << 20)")
        expectLine("transfer stopped; it resumes after the restart")
        expectLine("transfer interrupted by the restart")
        expectLine("attempt started", "attempt=3")
        expectLine("transfer resumed", "attempt=3")
        expectLine("job completed: the file landed", "sha256=\(content.sha256Hex())")
        // Every line naming the job names it as metadata, and no line about a transfer lacks it.
        let about = ["attempt", "checkpoint", "retry", "resumed", "interrupted", "landed", "job accepted", "job completed"]
        let daemonWide = [
            "stopping: checkpointing running transfers", "resuming interrupted transfers", "shutdown took longer than shutdown_timeout_seconds",
        ]
        for line in lines where (about.contains(where: line.contains) && !daemonWide.contains(where: line.contains)) || line.contains(job.id) {
            #expect(line.contains("job=\(job.id)"), "\(line) in:\n\(daemon.log)")
        }
        try await server.shutdown()
    }
}
