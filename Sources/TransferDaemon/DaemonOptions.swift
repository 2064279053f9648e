import Configuration

/// What the command line sets: the role, where things live, and the configuration keys given as
/// flags. `transferd --help` says what each one does.
package struct DaemonOptions: Sendable {
    /// `--system`: run as the system service.
    package var system: Bool
    /// `--socket`: the control socket, when not passed by systemd.
    package var socket: String?
    /// `--state-dir`: where the journal lives.
    package var stateDirectory: String?
    /// `--config`: the JSON configuration file.
    package var config: String?
    /// `--log-level`, over `log_level`.
    package var logLevel: String?
    /// `--max-concurrent-transfers`, over `max_concurrent_transfers`.
    package var maxConcurrentTransfers: Int?

    package init(
        system: Bool = false, socket: String? = nil, stateDirectory: String? = nil, config: String? = nil,
        logLevel: String? = nil, maxConcurrentTransfers: Int? = nil
    ) {
        self.system = system
        self.socket = socket
        self.stateDirectory = stateDirectory
        self.config = config
        self.logLevel = logLevel
        self.maxConcurrentTransfers = maxConcurrentTransfers
    }

    /// The configuration keys given as flags, which win over the file and the environment.
    var configurationFlags: [String: ConfigContent] {
        var flags: [String: ConfigContent] = [:]
        if let logLevel { flags["log_level"] = .string(logLevel) }
        if let maxConcurrentTransfers { flags["max_concurrent_transfers"] = .int(maxConcurrentTransfers) }
        return flags
    }
}
