import Metrics
import TransferProtocol

/// What the core measures, through the swift-metrics facade: the daemon chooses the backend
/// (Prometheus) by bootstrapping `MetricsSystem` before the core is created; without one, these
/// cost nothing. Metric names follow Prometheus conventions (`_total` counters, `_seconds`
/// timers); every metric is described in docs/metrics.md.
///
/// Nothing here runs per received chunk: bytes are counted from the engine's checkpoint and end
/// reports, and from its live progress when metrics are read.
struct TransferMetrics: Sendable {
    let transfersStarted = Counter(label: "transferd_transfers_started_total")
    let transfersCompleted = Counter(label: "transferd_transfers_completed_total")
    let retries = Counter(label: "transferd_retries_total")
    let receivedBytes = Counter(label: "transferd_received_bytes_total")
    /// Request bodies sent (uploads); downloads send none.
    let sentBytes = Counter(label: "transferd_sent_bytes_total")
    let submitDuration = Metrics.Timer(label: "transferd_submit_duration_seconds")
    let subscribers = Gauge(label: "transferd_subscribers")
    /// Jobs by state, set from the job table when metrics are read.
    let jobs: [JobState: Gauge]

    init() {
        var jobs: [JobState: Gauge] = [:]
        for state in JobState.allCases {
            jobs[state] = Gauge(label: "transferd_jobs", dimensions: [("state", state.rawValue)])
        }
        self.jobs = jobs
        // Registered at zero, so a scrape shows them before the first transfer.
        sentBytes.increment(by: 0)
        receivedBytes.increment(by: 0)
    }

    /// A job failed for good with the error `code` (`http_status`, `dns`, `disk`, …); a code this
    /// version does not know counts as `unrecognized`, so the label keeps a bounded set of values.
    func failed(code: JobErrorCode) {
        Counter(label: "transferd_transfers_failed_total", dimensions: [("code", code.rawValue)]).increment()
    }
}
