import ArgumentParser
import TransferProtocol

/// Why transferctl stops with a non-zero exit code, and what it tells the user on stderr.
enum TransferCtlError: Error {
    /// One socket transferctl tried and why connecting failed.
    struct Attempt: Sendable {
        var candidate: SocketCandidate
        var reason: String
        /// The socket is there but its permissions keep this user out.
        var permissionDenied = false
    }

    /// No candidate socket accepted a connection (exit 3).
    case unreachable([Attempt])
    /// The connection broke or transferd answered something that is not a response (exit 3).
    case connectionBroken(String)
    /// transferd answered with a JSON-RPC error (exit 4).
    case refused(RPCError)
    /// The waited-for job failed or was cancelled; the reason is already on stderr (exit 1).
    case jobUnsuccessful
    /// A usage error found while running (exit 2); the message is complete.
    case usage(String)
    /// A file named on the command line cannot be read (exit 2): nothing was sent to transferd.
    case localFile(String)
    /// The default socket's directory or file could be another user's: nothing was sent (exit 3).
    case untrustedSocket(String, String, remove: String)

    init(_ error: ControlClientError) {
        switch error {
        case .cannotConnect(let path, let reason):
            self = .unreachable([Attempt(candidate: SocketCandidate(path: path, origin: .default), reason: reason)])
        case .permissionDenied(let path):
            self = .unreachable([Attempt(candidate: SocketCandidate(path: path, origin: .default), reason: "permission denied", permissionDenied: true)])
        case .rpc(let error):
            self = .refused(error)
        case .protocolViolation:
            self = .connectionBroken(error.description)
        }
    }

    var exitCode: ExitCode {
        switch self {
        case .unreachable, .connectionBroken, .untrustedSocket: return .daemonUnreachable
        case .refused: return .requestRefused
        case .jobUnsuccessful: return .jobUnsuccessful
        case .usage, .localFile: return .usageError
        }
    }

    /// The lines to print on stderr, if any.
    var message: String? {
        switch self {
        case .unreachable(let attempts):
            return Self.unreachableMessage(attempts)
        case .connectionBroken(let detail):
            return "transferctl: \(detail)"
        case .refused(let error):
            return "transferctl: \(error.message)"
        case .jobUnsuccessful:
            return nil
        case .usage(let message):
            return message
        case .localFile(let problem):
            return "transferctl: \(problem)"
        case .untrustedSocket(let path, let problem, let remove):
            return "transferctl: refusing to use the socket \(path): \(problem), so another user could be listening there "
                + "and read what transferctl sends; nothing was sent. Remove \(remove) (ask an administrator if you cannot) "
                + "and start your transferd again, or name the socket with --socket or TRANSFERD_SOCKET"
        }
    }

    private static func unreachableMessage(_ attempts: [Attempt]) -> String {
        // A socket that is there but closed to this user: the daemon runs, the fix is access.
        if let denied = attempts.first(where: \.permissionDenied) {
            return "transferctl: " + SocketAccess.deniedMessage(path: denied.candidate.path)
        }
        var lines: [String]
        if attempts.count == 1, let attempt = attempts.first {
            lines = ["transferctl: cannot connect to transferd at \(attempt.candidate.described): \(attempt.reason)"]
        } else {
            lines = ["transferctl: cannot connect to transferd; tried:"]
            lines += attempts.map { "  \($0.candidate.described): \($0.reason)" }
        }
        lines.append(
            "transferctl: is transferd running? If not, start it with `transferd` "
                + "(or `systemctl --user start transferd` / `sudo systemctl start transferd`), "
                + "or point transferctl at it with --socket or TRANSFERD_SOCKET."
        )
        return lines.joined(separator: "\n")
    }
}
