import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which control socket transferctl uses, and why: the rule `transferctl socket-path` prints, so
/// that a script finds the daemon exactly as transferctl does.
struct SocketChoice: Sendable, Equatable {
    /// Where the chosen path came from.
    enum Source: String, Sendable, Codable {
        /// `--socket`.
        case flag
        /// `TRANSFERD_SOCKET`.
        case environment
        /// The user's own daemon's default socket.
        case user
        /// The system daemon's socket.
        case system
    }

    var path: String
    var source: Source
    /// One sentence saying why this path.
    var reason: String
    /// Whether a daemon accepted a connection there.
    var reachable: Bool
    /// Why nothing could be reached there, when it could not.
    var problem: String?

    /// Picks the socket from `options`' flag, the environment, else the first default socket a
    /// daemon accepts connections on (the user's own, then the system's); when none does, the
    /// user's own, where `transferd` started by this user would listen.
    static func resolve(
        _ options: ClientOptions, environment: [String: String] = ProcessInfo.processInfo.environment, uid: UInt32 = getuid(),
        probe: (String) -> String? = SocketChoice.probe
    ) -> SocketChoice {
        if let socket = options.socket {
            return SocketChoice(path: socket, source: .flag, reason: "given with --socket", probe: probe)
        }
        if let path = environment["TRANSFERD_SOCKET"], !path.isEmpty {
            return SocketChoice(path: path, source: .environment, reason: "TRANSFERD_SOCKET names it", probe: probe)
        }
        let own = DefaultPaths.userSocket(environment: environment, uid: uid)
        let ownReason = "your own transferd's socket (\(userSocketRule(environment: environment, uid: uid)))"
        let mine = SocketChoice(path: own, source: .user, reason: ownReason, probe: probe)
        if mine.reachable || own == DefaultPaths.systemSocket { return mine }
        let system = SocketChoice(
            path: DefaultPaths.systemSocket, source: .system,
            reason: "the system transferd's socket (nothing listens at your own, \(own))", probe: probe)
        if system.reachable { return system }
        var unreachable = mine
        unreachable.reason = ownReason + "; the system transferd's (\(DefaultPaths.systemSocket)) is not reachable either: \(system.problem ?? "")"
        return unreachable
    }

    private init(path: String, source: Source, reason: String, probe: (String) -> String?) {
        self.path = path
        self.source = source
        self.reason = reason
        problem = probe(path)
        reachable = problem == nil
    }

    /// How the user's own socket path was found, in the words of `DefaultPaths.userSocket`.
    static func userSocketRule(environment: [String: String], uid: UInt32) -> String {
        if let xdg = environment["XDG_RUNTIME_DIR"], xdg.hasPrefix("/") { return "in $XDG_RUNTIME_DIR" }
        let runUser = "/run/user/\(uid)"
        var info = stat()
        if uid == 0 || (stat(runUser, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR) {
            return "XDG_RUNTIME_DIR is unset, so in \(runUser)"
        }
        return "XDG_RUNTIME_DIR is unset and there is no \(runUser), so in /tmp"
    }

    /// Nil when a daemon accepts a connection at `path` (nothing is sent), else why not.
    static func probe(_ path: String) -> String? {
        do {
            _ = try ControlClient(socketPath: path, timeout: .seconds(5))
            return nil
        } catch {
            switch error {
            case .cannotConnect(_, let reason): return reason
            case .permissionDenied: return SocketAccess.deniedMessage(path: path)
            case .rpc, .protocolViolation: return error.description
            }
        }
    }
}
