import TransferProtocol

/// Whether this daemon is the system service or a user's own daemon, which decides its defaults:
/// paths, the configuration file, `allowed_roots` and `local_addresses: "auto"`.
package enum DaemonRole: Sendable, Equatable {
    /// Started by the system unit (`--system`, or systemd's system manager's directories), or on
    /// the system's state directory: users other than the daemon's own may submit to it.
    case systemService
    /// Run by a user for themself, in the foreground or under their user manager, root included: it
    /// may fetch only what that user could fetch anyway.
    case user

    /// `--system` says so; otherwise the directories systemd's *system* manager passes (a
    /// `RuntimeDirectory=` outside `/run/user/`, a `StateDirectory=` in `/var/lib`), or a state
    /// directory given as `/var/lib/transferd`, make a system service. Anything else, root started
    /// by hand included, is a user's own daemon.
    package static func detect(systemFlag: Bool, environment: [String: String], stateDirectory: String?) -> DaemonRole {
        if systemFlag { return .systemService }
        if let state = stateDirectory ?? nonEmpty(environment["TRANSFERD_STATE_DIR"]),
            state == DefaultPaths.systemStateDirectory || state.hasPrefix(DefaultPaths.systemStateDirectory + "/")
        {
            return .systemService
        }
        if let runtime = first(environment["RUNTIME_DIRECTORY"]), !runtime.hasPrefix("/run/user/") { return .systemService }
        if let state = first(environment["STATE_DIRECTORY"]), state.hasPrefix("/var/lib/") { return .systemService }
        return .user
    }

    package var isSystem: Bool { self == .systemService }

    /// The first of systemd's colon-separated directories.
    private static func first(_ value: String?) -> String? {
        guard let value = nonEmpty(value) else { return nil }
        return value.split(separator: ":").first.map(String.init)
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
