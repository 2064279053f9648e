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

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
