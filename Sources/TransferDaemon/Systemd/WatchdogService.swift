import Logging
import ServiceLifecycle

/// Pings systemd's watchdog (`WATCHDOG=1`) at half its interval, and only while the daemon is
/// healthy, so that systemd restarts a daemon whose core or journal hangs. Without a watchdog it
/// does nothing but wait for shutdown.
struct WatchdogService: Service {
    /// systemd's interval, or nil when it expects no pings from this process.
    let interval: Duration?
    let health: HealthCheck
    let logger: Logger

    func run() async throws {
        guard let interval else {
            try? await gracefulShutdown()
            return
        }
        let period = interval / 2
        // A late answer still leaves time for the next ping: at most 3/4 of the interval between two.
        let bound = period / 2
        logger.debug("watchdog enabled", metadata: ["interval": "\(interval)"])
        try? await cancelWhenGracefulShutdown {
            var failing = false
            var next = ContinuousClock.now
            while !Task.isCancelled {
                let outcome = await health.check(within: bound)
                // A check cut short by the stop says nothing about health.
                if Task.isCancelled { break }
                switch outcome {
                case .healthy:
                    SystemdNotifier.watchdog()
                    if failing {
                        logger.notice("healthy again: watchdog pings resume")
                        failing = false
                    }
                case .unhealthy(let reason):
                    if !failing {
                        logger.error(
                            "not pinging the watchdog: \(reason); systemd restarts transferd if this lasts",
                            metadata: ["interval": "\(interval)"])
                        failing = true
                    }
                }
                next = max(next + period, .now)
                try await Task.sleep(until: next)
            }
        }
    }
}
