import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A `transferd` started the way a systemd socket unit starts it: a listening socket the test made is
/// its fd 3, with `LISTEN_FDS=1` and `LISTEN_PID` set to the daemon's own pid.
///
/// `LISTEN_PID` cannot be known before the process exists, so a shell sets it to its own pid (`$$`)
/// and then `exec`s the daemon, which keeps that pid.
final class ActivatedDaemon: Sendable {
    let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `transferd arguments…` with `listener` as fd 3, `environment` added to the test
    /// environment, and stdout and stderr appended to `logPath`.
    init(listener: Int32, arguments: [String], environment extra: [String: String], logPath: String) throws {
        var environment = TestDaemon.environment(extra)
        environment["LISTEN_FDS"] = "1"
        let script = #"export LISTEN_PID=$$; exec "$0" "$@""#
        let argv = ["/bin/sh", "-c", script, Binaries.transferd] + arguments
        let envp = environment.map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copy: only fd 3 (and 0-2) reach the daemon.
        // (A listener that is fd 3 already would keep close-on-exec: move it first.)
        let source = listener == 3 ? fcntl(listener, F_DUPFD_CLOEXEC, 10) : listener
        defer { if source != listener { close(source) } }
        posix_spawn_file_actions_adddup2(&actions, source, 3)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var child: pid_t = 0
        let result = Self.withCStrings(argv) { argvPointers in
            Self.withCStrings(envp) { envPointers in
                posix_spawn(&child, "/bin/sh", &actions, nil, argvPointers, envPointers)
            }
        }
        guard result == 0 else { throw NotifySocketError("posix_spawn: \(String(cString: strerror(result)))") }
        pid = child
    }

    /// Calls `body` with a NULL-terminated array of C strings.
    private static func withCStrings(_ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> Int32) -> Int32 {
        let pointers = strings.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return pointers.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return EINVAL }
            return body(base)
        }
    }

    var isRunning: Bool { reap(blocking: false) == nil }

    func send(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Waits for the daemon to exit and returns its exit status (128 + n when killed by signal n).
    func exitStatus(seconds: Double = 60) async throws -> Int32 {
        var status: Int32?
        try await waitUntil("transferd (pid \(pid)) to exit", seconds: seconds) {
            status = reap(blocking: false)
            return status != nil
        }
        return status ?? -1
    }

    func kill9() {
        guard isRunning else { return }
        kill(pid, SIGKILL)
        _ = reap(blocking: true)
    }

    private func reap(blocking: Bool) -> Int32? {
        exitStatus.withLock { known in
            if let known { return known }
            var status: Int32 = 0
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            guard result == pid else { return nil }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import.
            let signal = status & 0x7f
            known = signal == 0 ? (status >> 8) & 0xff : 128 + signal
            return known
        }
    }
}

/// A Unix stream socket bound to `path` and listening, close-on-exec, as a socket unit would make it.
func listeningUnixSocket(path: String) throws -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw NotifySocketError("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw NotifySocketError("path too long: \(path)") }
    withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
        for (index, byte) in bytes.enumerated() { sunPath[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(descriptor, 16) == 0 else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw NotifySocketError("bind/listen \(path): \(reason)")
    }
    return descriptor
}
