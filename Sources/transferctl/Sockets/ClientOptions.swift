import ArgumentParser
import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The options every command that talks to transferd shares: where its socket is.
struct ClientOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's control socket.",
            discussion: """
                Defaults to $TRANSFERD_SOCKET, else your own daemon's socket, then the system \
                daemon's (\(DefaultPaths.systemSocket)).
                """,
            valueName: "path"
        )
    )
    var socket: String?

    func validate() throws {
        if let socket, socket.isEmpty {
            throw ValidationError("--socket needs a path")
        }
    }

    /// The sockets to try, in order: the flag, else TRANSFERD_SOCKET, else the defaults.
    func candidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [SocketCandidate] {
        if let socket {
            return [SocketCandidate(path: socket, origin: .flag)]
        }
        if let path = environment["TRANSFERD_SOCKET"], !path.isEmpty {
            return [SocketCandidate(path: path, origin: .environment)]
        }
        return DefaultPaths.clientSocketCandidates(environment: environment, uid: getuid())
            .map { SocketCandidate(path: $0, origin: .default) }
    }

    /// Connects to the first candidate that accepts, or says which ones failed and why. Calls on
    /// the connection fail after `timeout` without an answer; nil (for event streams) waits for ever.
    func connect(timeout: Duration? = .seconds(60)) throws(TransferCtlError) -> ControlClient {
        var attempts: [TransferCtlError.Attempt] = []
        for candidate in candidates() {
            try Self.ensureTrusted(candidate)
            do {
                // A daemon answers in milliseconds; a minute of silence means it is stuck.
                return try ControlClient(socketPath: candidate.path, timeout: timeout)
            } catch {
                let reason: String
                switch error {
                case .cannotConnect(_, let why): reason = why
                case .permissionDenied: reason = "permission denied"
                case .rpc, .protocolViolation: reason = error.description
                }
                attempts.append(TransferCtlError.Attempt(candidate: candidate, reason: reason, permissionDenied: error.isPermissionDenied))
            }
        }
        throw .unreachable(attempts)
    }

    /// Refuses the user's own default socket when its directory or the socket itself could be
    /// another user's (`/tmp/transferd-UID` made by someone else, say): whoever listens there
    /// would read the request, credentials included. A socket named with --socket or
    /// TRANSFERD_SOCKET is the user's choice, and the system daemon's lies where only root writes.
    static func ensureTrusted(_ candidate: SocketCandidate, uid: UInt32 = getuid()) throws(TransferCtlError) {
        guard candidate.origin == .default, candidate.path != DefaultPaths.systemSocket else { return }
        let directory = (candidate.path as NSString).deletingLastPathComponent
        if let problem = DefaultPaths.socketDirectoryProblem(directory, uid: uid) {
            throw .untrustedSocket(candidate.path, "its directory \(directory) \(problem)", remove: directory)
        }
        if let problem = DefaultPaths.socketFileProblem(candidate.path, uid: uid) {
            throw .untrustedSocket(candidate.path, "the socket \(problem)", remove: candidate.path)
        }
    }
}
