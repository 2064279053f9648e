import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Where the daemon logs: to the journal, natively, when its stderr is connected to the journal
/// (systemd then sets `JOURNAL_STREAM` to stderr's device and inode); otherwise readable lines on
/// stderr.
enum LogDestination: Equatable {
    case journal
    case standardError

    static func detect(environment: [String: String]) -> LogDestination {
        guard let stream = environment["JOURNAL_STREAM"] else { return .standardError }
        let parts = stream.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return .standardError }
        var info = stat()
        guard fstat(STDERR_FILENO, &info) == 0 else { return .standardError }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode ? .journal : .standardError
    }

    /// Installs the handler every logger uses, following `level`; values are escaped on their way
    /// (`EscapingLogHandler`).
    func bootstrap(level: LiveLogLevel) {
        LoggingSystem.bootstrap { label in
            switch self {
            case .journal:
                return LiveLevelLogHandler(EscapingLogHandler(JournalLogHandler()), level: level)
            case .standardError:
                return LiveLevelLogHandler(EscapingLogHandler(StreamLogHandler.standardError(label: label)), level: level)
            }
        }
    }
}
