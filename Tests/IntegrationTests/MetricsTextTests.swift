import Prometheus
import Testing
import TransferDaemon

/// The pieces of the metrics export that need no daemon: the listen address and the text.
@Suite("Metrics text and address")
struct MetricsTextTests {
    @Test(arguments: [
        ("127.0.0.1:9464", "127.0.0.1", 9464),
        ("localhost:0", "localhost", 0),
        ("[::1]:9464", "::1", 9464),
        ("0.0.0.0:65535", "0.0.0.0", 65535),
    ])
    func addressesThatParse(text: String, host: String, port: Int) {
        let address = MetricsListenAddress(text)
        #expect(address?.host == host)
        #expect(address?.port == port)
    }

    @Test(arguments: ["9464", ":9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "::1:9464", "[::1]9464", "host:-1", "a b:1", "127.0.0.1:٣"])
    func addressesThatDoNot(text: String) {
        #expect(MetricsListenAddress(text) == nil)
    }

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
