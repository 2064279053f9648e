import Logging
import TransferCore
import TransferProtocol

/// Reads the configuration again and applies what can change while the daemon runs, one reload
/// at a time, whether SIGHUP or a client's `reload` asked for it. An invalid file changes
/// nothing: the error is logged, naming the key, and thrown to the caller.
actor ConfigurationReloader {
    /// What a reload changed.
    struct Outcome: Sendable {
        /// Keys whose new values are in effect.
        var applied: [String]
        /// Keys whose new values wait for the next start.
        var pending: [String]
        /// The configuration file read, nil when none: a file created since the start counts.
        var file: String?
    }

    /// Loads the configuration as at start-up: defaults, file, environment, flags; and names the
    /// file it read.
    private let load: @Sendable () async throws -> (DaemonConfiguration, String?)
    private let configuration: LiveConfiguration
    private let logLevel: LiveLogLevel
    private let manager: TransferManager
    /// The engine's host rules, and how a configuration turns into them.
    private let hosts: HostGuard
    private let hostPolicy: @Sendable (DaemonConfiguration, String?) -> HostPolicy
    /// The engine's bandwidth limits.
    private let rates: RateGovernor
    private let logger: Logger
    /// Set once the control server exists (it needs the router, which needs this reloader).
    private var server: ControlServer?

    init(
        load: @escaping @Sendable () async throws -> (DaemonConfiguration, String?), configuration: LiveConfiguration,
        logLevel: LiveLogLevel, manager: TransferManager, hosts: HostGuard,
        hostPolicy: @escaping @Sendable (DaemonConfiguration, String?) -> HostPolicy,
        rates: RateGovernor, logger: Logger
    ) {
        self.rates = rates
        self.load = load
        self.configuration = configuration
        self.logLevel = logLevel
        self.manager = manager
        self.hosts = hosts
        self.hostPolicy = hostPolicy
        self.logger = logger
    }

    /// The server whose socket mode and group a reload may change.
    func attach(server: ControlServer) {
        self.server = server
    }

    /// Reloads between systemd's RELOADING=1 and READY=1; throws the configuration's error, after
    /// logging it, when the new one is invalid.
    func reload() async throws -> Outcome {
        SystemdNotifier.reloading()
        let old = configuration.current
        let new: DaemonConfiguration
        let file: String?
        do {
            (new, file) = try await load()
        } catch {
            logger.error("reload failed; the previous configuration stays in effect", metadata: ["error": "\(error)"])
            SystemdNotifier.ready(status: await ManagerService.status(of: manager))
            throw error
        }
        let applied = old.applyingLiveKeys(from: new)
        do {
            try applied.applyNetworkSettings()
        } catch {
            logger.error("reload failed; the previous configuration stays in effect", metadata: ["error": "\(error)"])
            try? old.applyNetworkSettings()
            SystemdNotifier.ready(status: await ManagerService.status(of: manager))
            throw ConfigurationError(description: error.description)
        }
        configuration.replace(with: applied)
        logLevel.set(applied.logLevelValue)
        await manager.reconfigure(applied.core)
        manager.hub.budget.setLimits(perUser: applied.subscriberQueueBytesPerUser, total: applied.subscriberQueueBytesTotal)
        manager.spool?.setQuota(applied.spoolQuota)
        if applied.socketMode != old.socketMode { server?.apply(mode: applied.socketModeValue) }
        if applied.socketGroup != old.socketGroup, let gid = applied.socketGroupID {
            server?.apply(group: gid, named: applied.socketGroup)
        }
        hosts.replace(with: hostPolicy(applied, file))
        rates.replace(with: applied.ratePolicy)
        let changed = DaemonConfiguration.changedKeys(from: old, to: applied)
        let pending = DaemonConfiguration.changedKeys(from: applied, to: new)
        logger.info(
            "configuration reloaded",
            metadata: [
                "applied": "\(changed.isEmpty ? "nothing changed" : changed.joined(separator: ", "))",
                "max_concurrent_transfers": "\(applied.maxConcurrentTransfers)", "log_level": "\(applied.logLevel)",
            ])
        if !pending.isEmpty {
            logger.notice(
                "changed keys that take effect at the next start: restart transferd to apply them",
                metadata: ["keys": "\(pending.joined(separator: ", "))"])
        }
        SystemdNotifier.ready(status: await ManagerService.status(of: manager))
        return Outcome(applied: changed, pending: pending, file: file)
    }
}
