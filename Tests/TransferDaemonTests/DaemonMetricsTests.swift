import Prometheus
import Testing
import TransferDaemon

/// The exposition text, which needs no daemon.
@Suite("Metrics text")
struct DaemonMetricsTests {
    @Test func familiesAreSortedEachWithItsHelpLine() {
        let registry = PrometheusCollectorRegistry()
        registry.makeGauge(name: "transferd_subscribers").set(to: 2.0)
        registry.makeCounter(name: "transferd_journal_syncs_total").increment(by: Int64(3))
        registry.makeCounter(name: "transferd_transfers_failed_total", labels: [("code", "dns")]).increment()
        let text = DaemonMetrics.render(registry)
        #expect(text == """
            # HELP transferd_journal_syncs_total \(DaemonMetrics.help["transferd_journal_syncs_total"] ?? "")
            # TYPE transferd_journal_syncs_total counter
            transferd_journal_syncs_total 3
            # HELP transferd_subscribers \(DaemonMetrics.help["transferd_subscribers"] ?? "")
            # TYPE transferd_subscribers gauge
            transferd_subscribers 2.0
            # HELP transferd_transfers_failed_total \(DaemonMetrics.help["transferd_transfers_failed_total"] ?? "")
            # TYPE transferd_transfers_failed_total counter
            transferd_transfers_failed_total{code="dns"} 1

            """)
    }
}
