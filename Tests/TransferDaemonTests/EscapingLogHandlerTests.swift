import Logging
import Synchronization
import Testing
@testable import TransferDaemon

/// Every message and metadata value reaches the wrapped handler with its control characters escaped.
@Suite("Escaping log handler")
struct EscapingLogHandlerTests {
    /// Keeps what reaches it.
    final class Recorder: Sendable {
        let events = Mutex<[(message: String, metadata: Logger.Metadata)]>([])
    }

    struct RecordingHandler: LogHandler {
        let recorder: Recorder
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var merged = metadata
            if let own = event.metadata { merged.merge(own) { _, new in new } }
            recorder.events.withLock { $0.append(("\(event.message)", merged)) }
        }
    }

    @Test func messagesMetadataAndErrorsAreEscaped() {
        struct Failure: Error, CustomStringConvertible { var description: String { "bad\r\nline" } }
        let recorder = Recorder()
        var logger = Logger(label: "test") { _ in EscapingLogHandler(RecordingHandler(recorder: recorder)) }
        logger[metadataKey: "job"] = "a\nb"
        logger.warning(
            "refused \("x\u{1B}[2J")", error: Failure(),
            metadata: ["name": "evil\nFORGED", "list": ["\u{7}"], "nested": ["k": "\u{202E}txt"]])
        let events = recorder.events.withLock { $0 }
        #expect(events.count == 1)
        let (message, metadata) = events[0]
        #expect(message == "refused x\\u{1B}[2J: bad\\r\\nline")
        #expect(metadata["job"] == "a\\nb", "metadata set on the logger is escaped too")
        #expect(metadata["name"] == "evil\\nFORGED")
        #expect(metadata["list"] == ["\\u{7}"])
        #expect(metadata["nested"] == ["k": "\\u{202E}txt"])
    }

    @Test func plainTextPassesUnchanged() {
        let recorder = Recorder()
        let logger = Logger(label: "test") { _ in EscapingLogHandler(RecordingHandler(recorder: recorder)) }
        logger.info("job accepted", metadata: ["url": "https://example.com/ü?a=1", "tab": "a b"])
        let events = recorder.events.withLock { $0 }
        #expect(events.first?.message == "job accepted")
        #expect(events.first?.metadata["url"] == "https://example.com/ü?a=1")
    }
}
