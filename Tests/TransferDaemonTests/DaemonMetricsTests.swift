import Prometheus
import Testing
import TransferDaemon

/// The exposition text, which needs no daemon.
@Suite("Metrics text")
struct DaemonMetricsTests {
    @Test func familiesAreSortedEachWithItsHelpLine() {
        let registry = PrometheusCollectorRegistry()
        // No help text of its own, as swift-metrics makes them: render adds the daemon's.
        func named(_ name: String) -> MetricNameDescriptor { MetricNameDescriptor(metricName: name, unitName: "", helpText: "") }
        registry.makeGauge(descriptor: named("transferd_subscribers")).set(to: 2.0)
        registry.makeCounter(descriptor: named("transferd_journal_syncs_total")).increment(by: Int64(3))
        registry.makeCounter(descriptor: named("transferd_transfers_failed_total"), labels: [("code", "dns")]).increment()
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
