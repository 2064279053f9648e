import CSystemd
import Foundation
package import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Logs to the systemd journal through its native protocol, with a priority and structured fields:
/// the `job` metadata becomes `TRANSFER_JOB_ID=`, `url` becomes `TRANSFER_URL=` (URLs are logged
/// without credentials), any other key `TRANSFER_<KEY>=`. So `journalctl -u transferd
/// TRANSFER_JOB_ID=…` shows one job's story. The message also carries the metadata, for reading.
package struct JournalLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level = .trace
    let identifier: String
    /// Whether journald's native socket is there. `sd_journal_sendv` drops entries silently when it
    /// is not (a container that passed the journal stream through, say): then the lines go to stderr.
    let nativeProtocol: Bool

    /// The socket `sd_journal_sendv` writes to.
    static let socketPath = "/run/systemd/journal/socket"

    init(identifier: String = "transferd", metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.identifier = identifier
        self.metadataProvider = metadataProvider
        self.nativeProtocol = access(Self.socketPath, W_OK) == 0
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var message = "\(event.message)"
        if let error = event.error { message += ": \(error)" }
        let fields = Self.fields(
            level: event.level, message: message, metadata: merged, identifier: identifier,
            file: event.file, line: event.line, function: event.function)
        if !nativeProtocol || Self.send(fields) < 0 {
            // Keep the line on stderr, connected to the journal, which reads the priority prefix.
            let line = "<\(Self.priority(event.level))>\(Self.text(message, merged))\n"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// The journal fields of one entry, each `NAME=value`.
    package static func fields(
        level: Logger.Level, message: String, metadata: Logger.Metadata, identifier: String,
        file: String, line: UInt, function: String
    ) -> [String] {
        var fields = [
            "MESSAGE=" + text(message, metadata),
            "PRIORITY=\(priority(level))",
            "SYSLOG_IDENTIFIER=" + identifier,
            "CODE_FILE=" + file,
            "CODE_LINE=\(line)",
            "CODE_FUNC=" + function,
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            fields.append(fieldName(forMetadataKey: key) + "=\(value)")
        }
        return fields
    }

    /// `job` is `TRANSFER_JOB_ID`, `url` is `TRANSFER_URL`; any other key is upper-cased after
    /// `TRANSFER_`, with characters a field name cannot hold replaced by `_`, and cut to the
    /// journal's 64-character limit.
    package static func fieldName(forMetadataKey key: String) -> String {
        switch key {
        case "job": return "TRANSFER_JOB_ID"
        case "url": return "TRANSFER_URL"
        default:
            let name = key.uppercased().unicodeScalars.map { scalar -> Character in
                switch scalar {
                case "A"..."Z", "0"..."9": return Character(scalar)
                default: return "_"
                }
            }
            return String(("TRANSFER_" + String(name)).prefix(64))
        }
    }

    /// syslog priorities: trace and debug are 7 (debug), critical is 2 (crit).
    package static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// The message, then the metadata as `key=value` in key order.
    static func text(_ message: String, _ metadata: Logger.Metadata) -> String {
        guard !metadata.isEmpty else { return message }
        return message + " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// Sends one entry with `sd_journal_sendv`; returns its result (negative on failure).
    static func send(_ fields: [String]) -> Int32 {
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        for field in fields {
            let start = bytes.count
            bytes.append(contentsOf: field.utf8)
            ranges.append(start..<bytes.count)
        }
        return bytes.withUnsafeMutableBytes { buffer -> Int32 in
            let vectors = ranges.map { range in
                iovec(iov_base: buffer.baseAddress.map { $0 + range.lowerBound }, iov_len: range.count)
            }
            return vectors.withUnsafeBufferPointer { sd_journal_sendv($0.baseAddress, Int32($0.count)) }
        }
    }
}
