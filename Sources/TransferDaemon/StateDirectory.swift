import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The state directory (journal, lock): the daemon's own, mode 0700, and locked so two daemons never share it.
struct StateDirectory: ~Copyable {
    let path: String
    private let lockFD: Int32

    init(path: String) throws {
        if !FileManager.default.fileExists(atPath: path) {
            do {
                try FileManager.default.createDirectory(
                    atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw ConfigurationError(description: "cannot create the state directory \(path): \(error.localizedDescription); choose another with --state-dir or TRANSFERD_STATE_DIR")
            }
        }
        // The journal holds every job's request headers (credentials included): only the
        // daemon's user may reach it, whatever the directory's mode was before.
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ConfigurationError(description: "the state directory \(path) is not a directory: choose another with --state-dir or TRANSFERD_STATE_DIR")
        }
        guard info.st_uid == geteuid() else {
            throw ConfigurationError(
                description: "the state directory \(path) belongs to uid \(info.st_uid), not to the daemon's user (uid \(geteuid())): "
                    + "it holds request credentials, so give it to that user (chown) or choose another with --state-dir")
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw ConfigurationError(description: "cannot make the state directory \(path) private (chmod 0700): \(String(cString: strerror(errno)))")
        }
        let lockPath = path + "/transferd.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ConfigurationError(description: "cannot open \(lockPath): \(String(cString: strerror(errno))); check the state directory's owner and mode")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw ConfigurationError(description: "another transferd is using the state directory \(path): stop it first, or give this one another --state-dir")
        }
        ftruncate(fd, 0)
        let pid = "\(getpid())\n"
        _ = pid.withCString { write(fd, $0, strlen($0)) }
        self.path = path
        self.lockFD = fd
    }

    deinit { close(lockFD) }
}
