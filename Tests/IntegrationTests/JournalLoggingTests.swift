import Foundation
import Logging
import Testing
@testable import transferd
#if canImport(Glibc)
import Glibc
#endif

/// Logging to the systemd journal: the fields of an entry, and when the daemon chooses the journal.
@Suite("Journal logging")
struct JournalLoggingTests {
    @Test func jobAndURLMetadataBecomeTransferFields() {
        let fields = JournalLogHandler.fields(
            level: .warning, message: "job failed",
            metadata: ["job": "4f3c9a0d1e2b7a68", "url": "https://example.com/f.iso", "state_dir": "/var/lib/transferd", "sl-signal": "SIGTERM"],
            identifier: "transferd", file: "Sources/transferd/X.swift", line: 7, function: "f()")
        #expect(fields.contains("TRANSFER_JOB_ID=4f3c9a0d1e2b7a68"))
        #expect(fields.contains("TRANSFER_URL=https://example.com/f.iso"))
        #expect(fields.contains("TRANSFER_STATE_DIR=/var/lib/transferd"))
        #expect(fields.contains("TRANSFER_SL_SIGNAL=SIGTERM"))
        #expect(fields.contains("PRIORITY=4"))
        #expect(fields.contains("SYSLOG_IDENTIFIER=transferd"))
        let message = fields.first { $0.hasPrefix("MESSAGE=") }
        #expect(message == "MESSAGE=job failed job=4f3c9a0d1e2b7a68 sl-signal=SIGTERM state_dir=/var/lib/transferd url=https://example.com/f.iso")
    }

    @Test func levelsMapToSyslogPriorities() {
        let priorities = Logger.Level.allCases.map(JournalLogHandler.priority)
        #expect(priorities == [7, 7, 6, 5, 4, 3, 2])
    }

    @Test func fieldNamesAreValidJournalFieldNames() {
        for key in ["job", "url", "a.b-c d", String(repeating: "k", count: 100), "ünïcode"] {
            let name = JournalLogHandler.fieldName(forMetadataKey: key)
            #expect(name.count <= 64)
            #expect(name.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }, "\(name)")
        }
    }

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
}
