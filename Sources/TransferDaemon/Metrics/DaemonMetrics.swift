import Metrics
package import Prometheus
import TransferCore

/// The daemon's metrics backend: swift-metrics, as the core and the daemon record through it,
/// bootstrapped with swift-prometheus, which keeps every value and writes the text format.
package enum DaemonMetrics {
    /// Where every metric of this process lives.
    static let registry = PrometheusCollectorRegistry()

    /// The media type of the text format.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// Makes swift-metrics record into `registry`. Call once, before the journal and the core are
    /// created: metrics made earlier record nowhere.
    static func bootstrap() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // A journal sync takes well under a millisecond on a healthy disk, and seconds on a sick one.
        factory.durationHistogramBuckets["transferd_journal_sync_duration_seconds"] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5),
        ]
        factory.durationHistogramBuckets["transferd_submit_duration_seconds"] = [
            .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
        ]
        MetricsSystem.bootstrap(factory)
        // Registered at zero, so that a scrape shows them before the first connection.
        _ = connections
    }

    /// Control-socket connections open now.
    static let connections = Meter(label: "transferd_connections")

    static func connectionOpened() { connections.increment() }
    static func connectionClosed() { connections.decrement() }

    /// One line of help per metric family, written as `# HELP` before its `# TYPE` line
    /// (swift-metrics has no place for it). docs/metrics.md says more.
    package static let help: [String: String] = [
        "transferd_jobs": "Jobs known to the daemon, by state (queued, running, waiting, completed, failed, cancelled).",
        "transferd_received_bytes_total": "Body bytes received and written to partial files (counted at checkpoints and when read).",
        "transferd_sent_bytes_total": "Request body bytes sent (uploads).",
        "transferd_transfers_started_total": "Transfer attempts started.",
        "transferd_transfers_completed_total": "Transfers that completed: the file landed at its destination.",
        "transferd_transfers_failed_total": "Jobs that failed for good, by error code.",
        "transferd_retries_total": "Failed attempts that were scheduled to be retried.",
        "transferd_journal_syncs_total": "Journal appends made durable with fdatasync (a group commit counts once).",
        "transferd_journal_sync_duration_seconds": "Time fdatasync of the journal took.",
        "transferd_submit_duration_seconds": "Time from a submit request (or a batch of submits) to its durable answer.",
        "transferd_subscribers": "Event subscriptions open (clients' subscribe calls, and the hook runner's).",
        "transferd_connections": "Control-socket connections open.",
    ]

    /// The exposition text, metric families in name order, each with its help line.
    package static func render(_ registry: PrometheusCollectorRegistry = registry) -> String {
        let text = registry.emitToString()
        var families: [(name: String, lines: [Substring])] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let name = line.dropFirst("# TYPE ".count).prefix { $0 != " " }
                var lines: [Substring] = []
                if let help = help[String(name)] { lines.append(Substring("# HELP \(name) \(help)")) }
                lines.append(line)
                families.append((String(name), lines))
            } else if line.hasPrefix("# HELP ") {
                continue
            } else if !families.isEmpty {
                families[families.count - 1].lines.append(line)
            }
        }
        families.sort { $0.name < $1.name }
        return families.flatMap { family in family.lines.map { $0 + "\n" } }.joined()
    }

    /// The text after bringing the core's gauges and byte counts up to date.
    static func scrape(_ manager: TransferManager) async -> String {
        await manager.refreshMetrics()
        return render()
    }
}
