import Logging
import TransferProtocol

/// Escapes control characters in every message and metadata value before `wrapped` writes them
/// (`ControlCharacters.escaped`). Values in the log come from clients and servers (hand-off
/// names, URLs, server messages, reasons); escaping them here, once, covers every call site, so
/// no line can forge another or carry a terminal escape sequence to whoever reads the log.
///
/// The metadata and its provider are kept here, not in `wrapped`: `wrapped` only ever sees
/// escaped values, passed with each event.
struct EscapingLogHandler<Wrapped: LogHandler>: LogHandler {
    var wrapped: Wrapped
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(_ wrapped: Wrapped) {
        self.wrapped = wrapped
        metadataProvider = wrapped.metadataProvider
        metadata = wrapped.metadata
        self.wrapped.metadata = [:]
        self.wrapped.metadataProvider = nil
    }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let own = event.metadata { merged.merge(own) { _, new in new } }
        var escaped = event
        var message = "\(event.message)"
        // An error's description comes from the system or a server as much as any value.
        if let error = event.error {
            message += ": \(error)"
            escaped.error = nil
        }
        escaped.message = Logger.Message(stringLiteral: ControlCharacters.escaped(message))
        escaped.metadata = merged.isEmpty ? nil : merged.mapValues(Self.escaped)
        wrapped.log(event: escaped)
    }

    static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text):
            return .string(ControlCharacters.escaped(text))
        case .stringConvertible(let convertible):
            return .string(ControlCharacters.escaped(convertible.description))
        case .array(let values):
            return .array(values.map(escaped))
        case .dictionary(let values):
            return .dictionary(values.mapValues(escaped))
        }
    }
}
