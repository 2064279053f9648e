import Foundation
import Logging
import ServiceLifecycle
import TransferCore
import TransferProtocol
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// The daemon from start to stop: reads the configuration, opens the journal, starts the engine,
/// the control socket and the services around them, and runs until SIGTERM or SIGINT.
package enum Daemon {
    /// Runs the daemon as the command line says; returns after a graceful stop. A bad
    /// configuration, or a failure to open the state directory, the journal or a socket, ends the
    /// process with status 1 and the reason on stderr.
    package static func run(_ options: DaemonOptions) async throws {
        let environment = ProcessInfo.processInfo.environment
        // FoundationNetworking makes a disk cache and a cookie store, under $XDG_CACHE_HOME (~/.cache)
        // and $XDG_DATA_HOME (~/.local/share), as soon as any URLSessionConfiguration exists, even
        // one without them: in the system service's home, /var/lib/transferd. Pointed at /dev/null,
        // creating them fails quietly. transferd reads neither variable, and hooks do not inherit them.
        setenv("XDG_CACHE_HOME", "/dev/null", 1)
        setenv("XDG_DATA_HOME", "/dev/null", 1)
        HeapPolicy.configure()
        let uid = getuid()
        let configPath = options.config
        let flags = options.configurationFlags
        let role = DaemonRole.detect(systemFlag: options.system, environment: environment, stateDirectory: options.stateDirectory)
        let statePath = options.stateDirectory ?? DefaultPaths.stateDirectory(environment: environment, uid: uid, system: role.isSystem)
        let load: @Sendable () async throws -> (DaemonConfiguration, String?) = {
            try await DaemonConfiguration.load(path: configPath, environment: environment, flags: flags, role: role, uid: uid)
        }
        let configuration: DaemonConfiguration
        let configSource: String?
        do {
            try EnvironmentCheck.check(environment)
            (configuration, configSource) = try await load()
        } catch {
            Self.die("transferd: \(error)")
        }
        // A peer that goes away mid-write (a client, a hook's stdin) is an error to handle, not a signal that kills.
        signal(SIGPIPE, SIG_IGN)
        let level = LiveLogLevel(configuration.logLevelValue)
        LogDestination.detect(environment: environment).bootstrap(level: level)
        DaemonMetrics.bootstrap()
        let logger = Logger(label: "transferd")
        DescriptorLimit.check(DescriptorLimit.raise(logger: logger), configuration: configuration, logger: logger)
        let live = LiveConfiguration(configuration)
        let hostPolicy: @Sendable (DaemonConfiguration, String?) -> HostPolicy = { $0.hostPolicy(role, file: $1) }
        let hosts = HostGuard(hostPolicy(configuration, configSource))
        for root in configuration.allowedRoots.paths where !FileManager.default.fileExists(atPath: root) {
            logger.warning(
                "an allowed root does not exist: submits there are refused until it does",
                metadata: ["root": "\(root)", "setting": "\(configuration.allowedRoots.setting)"])
        }

        let state: StateDirectory
        let journal: Journal
        let engine: TransferEngine
        let manager: TransferManager
        let server: ControlServer
        let metricsListener: MetricsListener?
        let handoff: UploadHandoffServer?
        let reloader: ConfigurationReloader
        do {
            let passedSockets = try SocketActivation.listeningSockets()
            state = try StateDirectory(path: statePath)
            // The fault sweep (Tests/Faults) compacts small journals, so that its workload reaches a compaction.
            let compaction = environment["TRANSFERD_TEST_COMPACTION_BYTES"].flatMap(Int.init)
                .map { Journal.CompactionPolicy(minimumBytes: $0) } ?? Journal.CompactionPolicy()
            journal = try Journal(directory: state.path, policy: compaction, logger: logger) { error in
                // Nothing after a failed write or sync may be acknowledged: stop, let systemd restart and replay.
                logger.critical("stopping after a journal failure", metadata: ["error": "\(error.message)"])
                Glibc.exit(70)
            }
            var engineConfiguration = configuration.engine
            if let delay = environment["TRANSFERD_TEST_WRITE_DELAY_USEC"].flatMap(UInt32.init) {
                engineConfiguration.writeDelayMicroseconds = delay
            }
            try configuration.applyNetworkSettings()
            engine = TransferEngine(
                configuration: engineConfiguration, hosts: hosts, rates: RateGovernor(configuration.ratePolicy), logger: logger)
            let spool = try Spool(directory: state.path + "/spool", quota: configuration.spoolQuota)
            var core = configuration.core
            core.inbox = Inbox.beside(spool: spool.directory)
            manager = try TransferManager(
                journal: journal, engine: engine, configuration: core, logger: logger,
                hookSelector: HookRunner.selector(live), spool: spool)
            await manager.pruneInbox()
            manager.hub.budget.setLimits(perUser: configuration.subscriberQueueBytesPerUser, total: configuration.subscriberQueueBytesTotal)
            reloader = ConfigurationReloader(
                load: load, configuration: live, logLevel: level, manager: manager, hosts: hosts,
                hostPolicy: hostPolicy, rates: engine.rates, logger: logger)
            let router = RequestRouter(
                manager: manager, configuration: live, reloader: reloader, logger: logger)
            if let passedSockets {
                server = try await ControlServer.adopt(descriptor: passedSockets.control, router: router, configuration: live, logger: logger)
            } else {
                let socketPath = options.socket ?? DefaultPaths.daemonSocket(environment: environment, uid: uid, system: role.isSystem)
                try ControlSocket.prepare(path: socketPath, uid: uid, system: role.isSystem)
                server = try await ControlServer.bind(path: socketPath, router: router, configuration: live, logger: logger)
            }
            metricsListener = try await MetricsListener.bind(configuration.metricsListen, configuration: live, manager: manager, logger: logger)
            if let passed = passedSockets?.upload {
                handoff = UploadHandoffServer.adopt(
                    descriptor: passed, controlSocket: server.path, spool: spool, configuration: live, logger: logger)
            } else {
                handoff = UploadHandoffServer.bind(controlSocket: server.path, spool: spool, configuration: live, logger: logger)
            }
        } catch {
            Self.die("transferd: \(error)")
        }
        await reloader.attach(server: server)
        if let stallFile = environment["TRANSFERD_TEST_JOURNAL_STALL_FILE"] {
            JournalStallForTesting.start(journal: journal, whileFileExists: stallFile)
        }
        // Trapped before the group runs, so that a reload requested right after READY=1 finds its handler.
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let counts = await manager.counts
        logger.info(
            "ready",
            metadata: [
                "socket": "\(server.path)", "socket_activated": "\(!server.ownsPath)", "state_dir": "\(statePath)",
                "config": "\(configSource ?? "defaults")", "jobs": "\(counts.total)", "version": "\(transferdVersion)",
                "max_concurrent_transfers": "\(configuration.maxConcurrentTransfers)", "log_level": "\(configuration.logLevel)",
                "local_addresses": "\(configuration.deniesLocalAddresses(role) ? "deny" : "allow")",
                "allowed_roots": "\(configuration.allowedRoots)", "metrics_listen": "\(metricsListener.map { "http://\($0.address)/metrics" } ?? "off")",
                "role": "\(role.isSystem ? "system service" : "user daemon")",
            ])
        await manager.start()

        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: ManagerService(manager: manager, configuration: live, logger: logger)),
                    .init(service: HookRunner(manager: manager, configuration: live, logger: logger)),
                    .init(service: server),
                    .init(
                        service: ReloadService(hangups: hangups, reloader: reloader, manager: manager)),
                    .init(
                        service: WatchdogService(
                            interval: SystemdNotifier.watchdogInterval(), health: HealthCheck(manager: manager, journal: journal),
                            logger: logger)),
                ] + (metricsListener.map { [.init(service: $0)] } ?? []) + (handoff.map { [.init(service: $0)] } ?? []),
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
        withExtendedLifetime(state) {}
        _ = journal
    }

    private static func die(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        Glibc.exit(1)
    }
}
