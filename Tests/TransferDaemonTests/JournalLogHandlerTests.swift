import Logging
import Testing
import TransferDaemon

/// The fields of an entry the daemon sends to the systemd journal.
@Suite("Journal log handler")
struct JournalLogHandlerTests {
    @Test func jobAndURLMetadataBecomeTransferFields() {
        let fields = JournalLogHandler.fields(
            level: .warning, message: "job failed",
            metadata: ["job": "4f3c9a0d1e2b7a68", "url": "https://example.com/f.iso", "state_dir": "/var/lib/transferd", "sl-signal": "SIGTERM"],
            identifier: "transferd", file: "Sources/TransferDaemon/X.swift", line: 7, function: "f()")
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
}
