import Logging
import ServiceLifecycle
import TransferCore
import UnixSignals

/// Says READY=1 once the daemon runs, and on each SIGHUP re-reads the configuration between
/// RELOADING=1 and READY=1, applying what can change while running. An invalid file changes
/// nothing: the error is logged, naming the key, and READY=1 follows all the same.
///
/// READY=1 is sent from here, inside the service group, because by then the group's SIGTERM and
/// SIGINT handlers are installed, and SIGHUP's (`hangups`, created before the group) too: a stop
/// or reload requested right after READY=1 never meets a signal's default action.
struct ReloadService: Service {
    let hangups: UnixSignalsSequence
    /// Loads the configuration as at start-up: defaults, file, environment, flags.
    let load: @Sendable () async throws -> DaemonConfiguration
    let configuration: LiveConfiguration
    let logLevel: LiveLogLevel
    let manager: TransferManager
    let server: ControlServer
    /// The engine's host rules, and how a configuration turns into them.
    let hosts: HostGuard
    let hostPolicy: @Sendable (DaemonConfiguration) -> HostPolicy
    let logger: Logger

    func run() async throws {
        SystemdNotifier.ready(status: await ManagerService.status(of: manager))
        for await _ in hangups.cancelOnGracefulShutdown() {
            await reload()
        }
    }

    func reload() async {
        SystemdNotifier.reloading()
        let old = configuration.current
        do {
            let new = try await load()
            let applied = old.applyingLiveKeys(from: new)
            configuration.replace(with: applied)
            logLevel.set(applied.logLevelValue)
            await manager.reconfigure(applied.core)
            manager.hub.budget.setLimits(perUser: applied.subscriberQueueBytesPerUser, total: applied.subscriberQueueBytesTotal)
            if applied.socketMode != old.socketMode { server.apply(mode: applied.socketModeValue) }
            if applied.socketGroup != old.socketGroup, let gid = applied.socketGroupID {
                server.apply(group: gid, named: applied.socketGroup)
            }
            hosts.replace(with: hostPolicy(applied))
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
        } catch {
            logger.error("reload failed; the previous configuration stays in effect", metadata: ["error": "\(error)"])
        }
        SystemdNotifier.ready(status: await ManagerService.status(of: manager))
    }
}
