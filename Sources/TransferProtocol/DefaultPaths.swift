#if canImport(Glibc)
import Glibc
#endif

/// Where the control socket, state and configuration live, resolved as flag, then environment,
/// then default. The defaults depend on whether the daemon is the system service (`system`) or a
/// user's own daemon, root's included.
public enum DefaultPaths {
    /// The system daemon's socket.
    public static let systemSocket = "/run/transferd/transferd.sock"
    /// The system daemon's state directory.
    public static let systemStateDirectory = "/var/lib/transferd"
    /// The system daemon's configuration file, used when it exists.
    public static let systemConfigFile = "/etc/transferd/transferd.json"

    /// The socket a daemon listens on when no flag names one.
    public static func daemonSocket(environment: [String: String], uid: UInt32, system: Bool) -> String {
        if let path = nonEmpty(environment["TRANSFERD_SOCKET"]) { return path }
        if let runtime = nonEmpty(environment["RUNTIME_DIRECTORY"]) {
            // systemd may pass several directories separated by colons; the first is ours.
            let first = runtime.split(separator: ":").first.map(String.init) ?? runtime
            return first + "/transferd.sock"
        }
        return system ? systemSocket : userSocket(environment: environment, uid: uid)
    }

    /// A user's own daemon's socket: `$XDG_RUNTIME_DIR/transferd/transferd.sock`; without
    /// `XDG_RUNTIME_DIR` (root in a container, `su`, cron), `/run/user/UID/transferd/transferd.sock`
    /// when that directory exists or the user is root (who may create it), else
    /// `/tmp/transferd-UID/transferd.sock`.
    public static func userSocket(environment: [String: String], uid: UInt32) -> String {
        if let xdg = nonEmpty(environment["XDG_RUNTIME_DIR"]), xdg.hasPrefix("/") { return xdg + "/transferd/transferd.sock" }
        let runUser = "/run/user/\(uid)"
        if uid == 0 || isDirectory(runUser) { return runUser + "/transferd/transferd.sock" }
        return "/tmp/transferd-\(uid)/transferd.sock"
    }

    /// The sockets a client tries, in order, when no flag names one: its user's own daemon, then
    /// the system daemon.
    public static func clientSocketCandidates(environment: [String: String], uid: UInt32) -> [String] {
        if let path = nonEmpty(environment["TRANSFERD_SOCKET"]) { return [path] }
        let own = userSocket(environment: environment, uid: uid)
        return own == systemSocket ? [own] : [own, systemSocket]
    }

    /// The state directory of a daemon when no flag names one.
    public static func stateDirectory(environment: [String: String], uid: UInt32, system: Bool) -> String {
        if let path = nonEmpty(environment["TRANSFERD_STATE_DIR"]) { return path }
        if let state = nonEmpty(environment["STATE_DIRECTORY"]) {
            return state.split(separator: ":").first.map(String.init) ?? state
        }
        if system { return systemStateDirectory }
        if let xdg = nonEmpty(environment["XDG_STATE_HOME"]), xdg.hasPrefix("/") { return xdg + "/transferd" }
        return home(environment: environment, uid: uid) + "/.local/state/transferd"
    }

    /// The configuration file read when it exists and no flag or `TRANSFERD_CONFIG` names one: the
    /// system's for the system service, `$XDG_CONFIG_HOME/transferd/transferd.json`
    /// (`~/.config/transferd/transferd.json`) for a user's own daemon.
    public static func configFile(environment: [String: String], uid: UInt32, system: Bool) -> String {
        if system { return systemConfigFile }
        if let xdg = nonEmpty(environment["XDG_CONFIG_HOME"]), xdg.hasPrefix("/") { return xdg + "/transferd/transferd.json" }
        return home(environment: environment, uid: uid) + "/.config/transferd/transferd.json"
    }

    /// `$HOME`, else the account's home directory, else /tmp.
    private static func home(environment: [String: String], uid: UInt32) -> String {
        if let home = nonEmpty(environment["HOME"]), home.hasPrefix("/") { return home }
        if let entry = getpwuid(uid), let directory = entry.pointee.pw_dir {
            let path = String(cString: directory)
            if path.hasPrefix("/") { return path }
        }
        return "/tmp"
    }

    /// Why `directory` is no safe place for `uid`'s control socket, or nil when it is safe or
    /// missing: another user could otherwise remove the socket and put their own in its place, and
    /// read what clients send (headers with credentials). The directory (and the link to it, when
    /// it is one) must belong to `uid` or root, and others may not write to it unless the sticky
    /// bit keeps them from replacing what is there. The daemon checks its socket's directory
    /// before listening; `transferctl` checks its default socket's before sending anything.
    public static func socketDirectoryProblem(_ directory: String, uid: UInt32) -> String? {
        var entry = stat()
        guard !directory.isEmpty, lstat(directory, &entry) == 0 else { return nil }
        if entry.st_uid != uid && entry.st_uid != 0 {
            let what = (entry.st_mode & S_IFMT) == S_IFLNK ? "is a symbolic link that belongs" : "belongs"
            return "\(what) to uid \(entry.st_uid), not to you (uid \(uid)) or root"
        }
        var info = stat()
        guard stat(directory, &info) == 0 else { return nil }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return "is not a directory" }
        if info.st_uid != uid && info.st_uid != 0 {
            return "leads to a directory that belongs to uid \(info.st_uid), not to you (uid \(uid)) or root"
        }
        if info.st_mode & 0o022 != 0 && info.st_mode & S_ISVTX == 0 {
            return "may be written by others (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// Why the socket file at `path` is not one `uid` can trust, or nil (also when it is missing):
    /// it must belong to `uid` or root. (The system daemon's socket, in a directory only root
    /// writes, belongs to the daemon's own user and is not checked.)
    public static func socketFileProblem(_ path: String, uid: UInt32) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        guard info.st_uid == uid || info.st_uid == 0 else {
            return "belongs to uid \(info.st_uid), not to you (uid \(uid)) or root"
        }
        return nil
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
