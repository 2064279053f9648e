import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A second, unprivileged user (`transferd-test`) for tests of what the daemon does for users
/// other than its own. Created once, when the tests run as root; nil otherwise.
struct SecondUser: Sendable {
    static let name = "transferd-test"
    let uid: UInt32
    let gid: UInt32

    static let shared: SecondUser? = {
        guard geteuid() == 0 else { return nil }
        if let user = lookUp() { return user }
        // Exit status 9: created meanwhile by another run.
        let status = runQuietly("/usr/sbin/useradd", ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", name])
        guard status == 0 || status == 9 else { return nil }
        return lookUp()
    }()

    static let skipReason: Comment = "skipped: a second user is needed; run the tests as root, which creates \(name) with useradd"

    private static func lookUp() -> SecondUser? {
        guard let entry = getpwnam(name) else { return nil }
        return SecondUser(uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
    }

    /// Runs `transferctl` with `arguments` as this user (no supplementary groups); returns its
    /// exit status, stdout and stderr.
    func transferctl(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let (uid, gid) = (uid, gid)
        return try await offTheTestThreads { try Self.transferctl(arguments, uid: uid, gid: gid) }
    }

    private static func transferctl(_ arguments: [String], uid: UInt32, gid: UInt32) throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try runProcess(
            "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", Binaries.transferctl] + arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"])
        return (result.status, result.stdout, result.stderr)
    }

    /// A root daemon whose socket the second user may use; `out/` is root's, mode 0755.
    static func startDaemonServingBoth(name: String = #function) async throws -> (TestDaemon, SecondUser) {
        let user = try #require(SecondUser.shared)
        let daemon = try TestDaemon(name: name)
        chmod(daemon.directory, 0o755)
        chmod(daemon.directory + "/out", 0o755)
        try await daemon.start()
        user.mayConnect(to: daemon)
        return (daemon, user)
    }

    /// Lets this user connect to `daemon`'s socket: its group becomes the user's (the mode is 0660).
    func mayConnect(to daemon: TestDaemon) {
        chown(daemon.socketPath, 0, gid)
        chown(daemon.socketPath + ".upload", 0, gid)
    }

    /// Runs `command` with `/bin/sh -c` as this user; returns its exit status, stdout and stderr.
    func shell(_ command: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        let (uid, gid) = (uid, gid)
        return try await offTheTestThreads {
            let result = try runProcess(
                "/usr/bin/setpriv", ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", "--", "/bin/sh", "-c", command],
                environment: ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "LANG": "C.UTF-8"])
            return (result.status, result.stdout, result.stderr)
        }
    }
}
