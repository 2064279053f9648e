import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Prepares the control socket's path: its directory, and any socket file already there.
enum ControlSocket {
    /// Creates the socket's directory when missing (0755 for the system daemon so group members
    /// can reach the socket, 0700 for a user's), and removes a stale socket file. Refuses when a
    /// live daemon answers there, when something other than a socket is in the way, or when the
    /// directory is another user's or open to others (`/tmp/transferd-UID` made by someone else).
    static func prepare(path: String, uid: UInt32, system: Bool) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                // Parents such as /run/user (for /run/user/0/transferd) are made as the system would
                // make them, 0755; only the socket's own directory is closed to others.
                let parent = (directory as NSString).deletingLastPathComponent
                if !parent.isEmpty, !FileManager.default.fileExists(atPath: parent) {
                    try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
                }
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: false,
                    attributes: [.posixPermissions: system ? 0o755 : 0o700])
            } catch {
                throw ConfigurationError(description: "cannot create the socket directory \(directory): \(error.localizedDescription); choose another place with --socket or TRANSFERD_SOCKET")
            }
        }
        if let problem = DefaultPaths.socketDirectoryProblem(directory, uid: uid) {
            throw ConfigurationError(
                description: "the socket directory \(directory) \(problem): another user could take over the socket; remove it, or choose another place with --socket or TRANSFERD_SOCKET")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw ConfigurationError(description: "\(path) exists and is not a socket: remove it, or choose another path with --socket")
        }
        if let client = try? ControlClient(socketPath: path, timeout: .seconds(2)) {
            let running = (try? client.call(Version.self, .init()))?.daemon ?? "unknown"
            throw ConfigurationError(description: "another transferd (version \(running)) is already listening on \(path): stop it first, or give this one another --socket and --state-dir")
        }
        // Nothing answers: a daemon died without removing its socket.
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ConfigurationError(description: "cannot remove the stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }
}
