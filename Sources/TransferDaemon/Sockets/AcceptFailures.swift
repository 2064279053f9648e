import Logging
import NIOCore
import Synchronization
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// Whether a listener's `accept(2)` is failing for want of descriptors or memory, so that a run of
/// such failures is logged once when it starts and once when it ends, not once per attempt (an
/// accept loop retries many times a second). While descriptors are short, one that frees up now
/// and then lets an accept through between failures: the run ends only at an accept
/// `quietNanoseconds` after the last failure. Decisions only; `AcceptFailureLog` logs them.
struct AcceptFailureEpisode: Sendable, Equatable {
    static let quietNanoseconds: UInt64 = 5_000_000_000

    private(set) var failures = 0
    private var lastFailure: UInt64 = 0

    /// The errors after which the listener keeps accepting once resources come back.
    static func isResourceShortage(_ code: Int32) -> Bool {
        code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM
    }

    /// Counts a failed accept at `now` (monotonic nanoseconds); true when it starts a run (log it).
    mutating func failed(at now: UInt64) -> Bool {
        failures += 1
        lastFailure = now
        return failures == 1
    }

    /// An accept at `now` ends a run that has been quiet long enough; the failures of the run that
    /// ended, if one did (log it).
    mutating func accepted(at now: UInt64) -> Int? {
        guard failures > 0, now &- lastFailure >= Self.quietNanoseconds else { return nil }
        defer { failures = 0 }
        return failures
    }
}

/// Logs a listener's runs of failed accepts (`EMFILE`, `ENFILE`, …): a warning naming the cause and
/// what to do when a run starts, a notice when connections are accepted again.
final class AcceptFailureLog: Sendable {
    private let episode = Mutex(AcceptFailureEpisode())
    private let listener: String
    private let logger: Logger

    init(listener: String, logger: Logger) {
        self.listener = listener
        self.logger = logger
    }

    func failed(errno code: Int32) {
        guard episode.withLock({ $0.failed(at: MonotonicClock.nanoseconds()) }) else { return }
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        logger.warning(
            "cannot accept connections, retrying until descriptors free up: raise LimitNOFILE= in the unit, or lower max_connections and metrics_max_connections",
            metadata: [
                "listener": "\(listener)", "error": "\(String(cString: strerror(code)))", "open_files_limit": "\(limit.rlim_cur)",
            ])
    }

    func accepted() {
        guard let failures = episode.withLock({ $0.accepted(at: MonotonicClock.nanoseconds()) }) else { return }
        logger.notice("accepting connections again", metadata: ["listener": "\(listener)", "failed_accepts": "\(failures)"])
    }
}

/// The first handler of a SwiftNIO server channel: reports accepts and their resource failures to
/// an `AcceptFailureLog`, and passes everything on (to the `AcceptBackoffHandler` that spaces out
/// the retries).
final class AcceptFailureHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = any Channel

    private let log: AcceptFailureLog

    init(_ log: AcceptFailureLog) {
        self.log = log
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        log.accepted()
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, AcceptFailureEpisode.isResourceShortage(error.errnoCode) {
            log.failed(errno: error.errnoCode)
        }
        context.fireErrorCaught(error)
    }
}
