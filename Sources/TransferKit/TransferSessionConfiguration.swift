public import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// How a ``TransferSession`` reaches transferd and what it asks of it: the counterpart of
/// `URLSessionConfiguration.background(withIdentifier:)`.
///
/// The identifier is the daemon's *session*: what the daemon finished while no process listened
/// is delivered to the next ``TransferSession`` created with the same identifier, by the same user.
public struct TransferSessionConfiguration: Sendable {
    /// The background session's name: 1 to 128 of `A-Z a-z 0-9 . _ -`, such as `com.example.feed`.
    public var identifier: String
    /// The daemon's control socket. `nil`: found as `transferctl` finds it (`TRANSFERD_SOCKET`,
    /// then the user's own daemon, then the system service's).
    public var socketPath: String?
    /// Where downloads created without a destination land before
    /// ``TransferSessionDelegate/transferSession(_:downloadTask:didFinishDownloadingTo:)`` hands
    /// them over. `nil`: `$XDG_CACHE_HOME/transferkit/<identifier>` (`~/.cache/transferkit/…`).
    /// It must lie inside the daemon's `allowed_roots`.
    public var downloadDirectory: URL?
    /// Headers sent with every request of the session (a request's own headers win).
    public var httpAdditionalHeaders: [String: String]?
    /// Seconds without a byte before an attempt fails and is retried (the job's idle timeout).
    /// `nil`: the daemon's default.
    public var timeoutIntervalForRequest: TimeInterval?
    /// Seconds a task may take in all before it fails (the job's `max_time_seconds`). `nil`:
    /// the daemon's default.
    public var timeoutIntervalForResource: TimeInterval?
    /// How uploads resume after an interruption: `auto` (ask the server), `tus`, `ietf` or `off`.
    public var uploadResumable: String?
    /// Whether a download's destination may be replaced (`downloadTask(with:to:)`).
    public var overwritesDestinations = false

    /// A background configuration: the daemon keeps every task of `identifier` and delivers its
    /// end to whichever process creates a session with that identifier next.
    public static func background(withIdentifier identifier: String) -> TransferSessionConfiguration {
        TransferSessionConfiguration(identifier: identifier)
    }

    public init(identifier: String) {
        self.identifier = identifier
    }

    /// The socket to connect to.
    func resolvedSocketPath() -> String {
        if let socketPath { return socketPath }
        let candidates = DefaultPaths.clientSocketCandidates(environment: ProcessInfo.processInfo.environment, uid: getuid())
        return candidates.first { FileManager.default.fileExists(atPath: $0) } ?? candidates.first ?? DefaultPaths.systemSocket
    }

    /// The directory downloads without a destination land in.
    func resolvedDownloadDirectory() -> URL {
        if let downloadDirectory { return downloadDirectory }
        let environment = ProcessInfo.processInfo.environment
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.cache"
        return URL(fileURLWithPath: cache).appendingPathComponent("transferkit").appendingPathComponent(identifier)
    }
}
