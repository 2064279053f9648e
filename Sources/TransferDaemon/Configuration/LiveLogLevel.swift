import Logging
import Synchronization

/// The log level every handler follows, so that a reload changes it for all loggers at once.
final class LiveLogLevel: Sendable {
    private let index: Atomic<Int>

    init(_ level: Logger.Level) {
        index = Atomic(Self.index(of: level))
    }

    var level: Logger.Level { Logger.Level.allCases[index.load(ordering: .relaxed)] }

    func set(_ level: Logger.Level) {
        index.store(Self.index(of: level), ordering: .relaxed)
    }

    private static func index(of level: Logger.Level) -> Int {
        Logger.Level.allCases.firstIndex(of: level) ?? 0
    }
}

/// A handler whose level is the live one (unless a logger sets its own), writing through `wrapped`.
struct LiveLevelLogHandler<Wrapped: LogHandler>: LogHandler {
    var wrapped: Wrapped
    let live: LiveLogLevel
    private var override: Logger.Level?

    init(_ wrapped: Wrapped, level: LiveLogLevel) {
        self.wrapped = wrapped
        // The wrapped handler sees every message that passes the live level.
        self.wrapped.logLevel = .trace
        self.live = level
    }

    var logLevel: Logger.Level {
        get { override ?? live.level }
        set { override = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        wrapped.log(event: event)
    }
}
