#if canImport(Glibc)
import Glibc
#endif

/// Where the control socket and state live, resolved as flag, then environment, then default.
public enum DefaultPaths {
    /// The system daemon's socket.
    public static let systemSocket = "/run/transferd/transferd.sock"
    /// The system daemon's state directory.
    public static let systemStateDirectory = "/var/lib/transferd"
    /// The system configuration file, used when it exists.
    public static let systemConfigFile = "/etc/transferd/transferd.json"

    /// The socket a daemon run by `uid` with `environment` listens on when no flag names one.
    public static func daemonSocket(environment: [String: String], uid: UInt32) -> String {
        if let path = nonEmpty(environment["TRANSFERD_SOCKET"]) { return path }
        if let runtime = nonEmpty(environment["RUNTIME_DIRECTORY"]) {
            // systemd may pass several directories separated by colons; the first is ours.
            let first = runtime.split(separator: ":").first.map(String.init) ?? runtime
            return first + "/transferd.sock"
        }
        return uid == 0 ? systemSocket : userRuntimeDirectory(environment: environment, uid: uid) + "/transferd/transferd.sock"
    }

    /// The sockets a client tries, in order, when no flag names one: the user's own daemon,
    /// then the system daemon.
    public static func clientSocketCandidates(environment: [String: String], uid: UInt32) -> [String] {
        if let path = nonEmpty(environment["TRANSFERD_SOCKET"]) { return [path] }
        if uid == 0 { return [systemSocket] }
        return [userRuntimeDirectory(environment: environment, uid: uid) + "/transferd/transferd.sock", systemSocket]
    }

    /// The state directory of a daemon run by `uid` when no flag names one.
    public static func stateDirectory(environment: [String: String], uid: UInt32) -> String {
        if let path = nonEmpty(environment["TRANSFERD_STATE_DIR"]) { return path }
        if let state = nonEmpty(environment["STATE_DIRECTORY"]) {
            return state.split(separator: ":").first.map(String.init) ?? state
        }
        if uid == 0 { return systemStateDirectory }
        if let xdg = nonEmpty(environment["XDG_STATE_HOME"]), xdg.hasPrefix("/") { return xdg + "/transferd" }
        let home = nonEmpty(environment["HOME"]) ?? "/tmp"
        return home + "/.local/state/transferd"
    }

    private static func userRuntimeDirectory(environment: [String: String], uid: UInt32) -> String {
        if let xdg = nonEmpty(environment["XDG_RUNTIME_DIR"]), xdg.hasPrefix("/") { return xdg }
        return "/run/user/\(uid)"
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
