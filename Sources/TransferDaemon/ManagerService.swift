import Foundation
import Logging
import ServiceLifecycle
import TransferCore
import TransferProtocol

/// Runs the core: applies engine reports, drops expired jobs, keeps systemd's STATUS current, and
/// on shutdown checkpoints every running transfer within a bounded time.
struct ManagerService: Service {
    let manager: TransferManager
    let configuration: LiveConfiguration
    let logger: Logger

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await manager.run() }
            group.addTask { await housekeeping() }
            await withGracefulShutdownHandler {
                try? await gracefulShutdown()
            } onGracefulShutdown: {
                SystemdNotifier.stopping(within: .seconds(configuration.current.shutdownTimeoutSeconds))
                // Subscribers hear why their connections close.
                manager.hub.closeAll(.shuttingDown)
                logger.info("stopping: checkpointing running transfers")
            }
            let timeout = configuration.current.shutdownTimeoutSeconds
            // A stuck transfer must not hold the daemon past systemd's stop timeout. The checkpoints
            // are taken even when the service group cancels this service meanwhile (another service
            // ended first): giving up on them at once cost a re-download and logged a timeout that
            // had not happened.
            let shutdown = Task { await manager.shutdown() }
            let finished = await waitForResult(of: shutdown, within: .seconds(timeout), evenIfCancelled: true) != nil
            if !finished {
                logger.warning("shutdown took longer than shutdown_timeout_seconds; transfers resume from their last checkpoint", metadata: ["seconds": "\(timeout)"])
            }
            group.cancelAll()
        }
        logger.info("stopped")
    }

    /// The counts systemd shows as the unit's status.
    static func status(of manager: TransferManager) async -> String {
        let counts = await manager.counts
        var status = "\(counts.running) running, \(counts.queued) queued, \(counts.waiting) waiting"
        if counts.paused > 0 { status += ", \(counts.paused) paused" }
        if counts.held { status += "; new transfers held (transferctl resume --all)" }
        return status
    }

    private func housekeeping() async {
        var sinceSweep = 0
        await manager.dropExpired()
        while true {
            // Once the stop begins, STATUS says so: no more counts.
            guard (try? await Task.sleep(for: .seconds(1))) != nil, !Task.isShuttingDownGracefully else { return }
            let limit = configuration.current.ratePolicy.limits(at: Date()).global.map { " (limit \(ByteCountFormatting.rate($0)))" } ?? ""
            SystemdNotifier.status("\(await Self.status(of: manager)), \(ByteCountFormatting.rate(await manager.aggregateRate))\(limit)")
            await manager.publishProgress()
            sinceSweep += 1
            if sinceSweep >= configuration.current.retentionSweepSeconds {
                sinceSweep = 0
                await manager.dropExpired()
            }
        }
    }
}
