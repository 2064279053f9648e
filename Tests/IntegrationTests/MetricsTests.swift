import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TransferProtocol
import TransferTestSupport

/// Metrics through the `metrics` method, `transferctl metrics` and the HTTP listener, from a real daemon.
@Suite("Metrics")
struct MetricsTests {
    /// The value of one series (`name` or `name{labels}`) in the text format, if present.
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The address the daemon's listener bound, from its "ready" line.
    static func metricsURL(_ daemon: TestDaemon) async throws -> URL {
        var found: URL?
        try await waitUntil("the daemon to log its metrics address") {
            guard let range = daemon.log.range(of: #"metrics_listen=http://[^ ]+/metrics"#, options: .regularExpression) else { return false }
            found = URL(string: String(daemon.log[range].dropFirst("metrics_listen=".count)))
            return found != nil
        }
        return try #require(found)
    }

    static func get(_ url: URL) async throws -> (status: Int, contentType: String?, body: String) {
        let (data, response) = try await URLSession.shared.data(from: url)
        let http = response as? HTTPURLResponse
        return (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "Content-Type"), String(decoding: data, as: UTF8.self))
    }

    @Test func metricsOverTheSocketAndHTTPShowTheBytesAndACompletedTransfer() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["metrics_listen": "127.0.0.1:0", "checkpoint_bytes": 256 << 10])
        defer { daemon.cleanUp() }
        let gate = ServerGate()
        let content = TestContent(seed: 1501, size: 3 << 20)
        server.serve("/big", content: content, behaviour: .holdAfter(bytes: 1 << 20, until: gate))
        try await daemon.start()
        let url = try await Self.metricsURL(daemon).absoluteURL
        let job = try daemon.submit(server.url("/big"), to: daemon.destination("big"))
        try await waitUntil("the first MiB") { try daemon.job(job.id).bytesReceived >= 1 << 20 }

        // During the download, over the socket: the bytes so far and one running job.
        let during = try daemon.client().call(MetricsMethod.self, .init())
        #expect(during.contentType == "text/plain; version=0.0.4; charset=utf-8")
        #expect(Self.value(during.text, "transferd_received_bytes_total") == Double(1 << 20), "\(during.text)")
        #expect(Self.value(during.text, #"transferd_jobs{state="running"}"#) == 1)
        #expect(Self.value(during.text, "transferd_transfers_started_total") == 1)
        #expect(Self.value(during.text, "transferd_connections") ?? 0 >= 1)
        #expect(during.text.contains("# HELP transferd_received_bytes_total "))
        #expect(during.text.contains("# TYPE transferd_journal_sync_duration_seconds histogram"))
        // …and over HTTP.
        let scraped = try await Self.get(url)
        #expect(scraped.status == 200)
        #expect(scraped.contentType == "text/plain; version=0.0.4; charset=utf-8")
        #expect(Self.value(scraped.body, "transferd_received_bytes_total") == Double(1 << 20), "\(scraped.body)")

        gate.open()
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed)
        let after = try await Self.get(url).body
        #expect(Self.value(after, "transferd_received_bytes_total") == Double(content.size), "\(after)")
        #expect(Self.value(after, "transferd_transfers_completed_total") == 1)
        #expect(Self.value(after, #"transferd_jobs{state="completed"}"#) == 1)
        #expect(Self.value(after, #"transferd_jobs{state="running"}"#) == 0)
        #expect(Self.value(after, "transferd_submit_duration_seconds_count") == 1)
        #expect(Self.value(after, "transferd_journal_syncs_total") ?? 0 >= 1)
        #expect(Self.value(after, "transferd_journal_sync_duration_seconds_count") == Self.value(after, "transferd_journal_syncs_total"))
        #expect(Self.value(after, "transferd_sent_bytes_total") == 0)

        // transferctl metrics prints the same text, for node_exporter's textfile collector.
        let printed = try await runTransferctl(["--socket", daemon.socketPath, "metrics"])
        #expect(printed.status == 0, "\(printed.stderr)")
        #expect(Self.value(printed.stdout, "transferd_received_bytes_total") == Double(content.size))
        #expect(printed.stdout.hasSuffix("\n"))
        #expect(try await Self.get(url.deletingLastPathComponent().appendingPathComponent("other")).status == 404)
        try await server.shutdown()
    }

    @Test func failuresAreCountedByErrorCodeAndRetriesAreCounted() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0])
        defer { daemon.cleanUp() }
        server.serve("/busy", content: TestContent(seed: 1502, size: 10_000), behaviour: .status(code: 503, times: 1))
        try await daemon.start()
        let missing = try daemon.submit(server.url("/missing"), to: daemon.destination("missing"))
        let busy = try daemon.submit(server.url("/busy"), to: daemon.destination("busy"))
        #expect(try await daemon.waitForTerminal(missing.id).state == .failed)
        #expect(try await daemon.waitForTerminal(busy.id).state == .completed)
        let text = try daemon.client().call(MetricsMethod.self, .init()).text
        #expect(Self.value(text, #"transferd_transfers_failed_total{code="http_status"}"#) == 1, "\(text)")
        #expect(Self.value(text, "transferd_retries_total") == 1)
        #expect(Self.value(text, "transferd_transfers_started_total") == 3)
        #expect(Self.value(text, "transferd_transfers_completed_total") == 1)
        #expect(Self.value(text, "transferd_received_bytes_total") == 10_000)
        try await server.shutdown()
    }

    @Test func aBatchOfSubmitsIsOneJournalSync() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        // The one job that starts holds on, so nothing but the batch writes to the journal meanwhile.
        let gate = ServerGate()
        server.serve("/held", content: TestContent(seed: 1503, size: 1000), behaviour: .holdAfter(bytes: 0, until: gate))
        try await daemon.start()
        let client = try daemon.client()
        let syncs = { Self.value(try client.call(MetricsMethod.self, .init()).text, "transferd_journal_syncs_total") ?? 0 }
        let before = try syncs()
        let params = (0..<200).map { Submit.Params(url: server.url("/held?\($0)"), destination: daemon.destination("f\($0)")) }
        let results = try client.callBatch(Submit.self, params)
        #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
        let after = try syncs()
        // The batch's records, then the first job's start (written without waiting for it).
        #expect(after - before <= 3, "200 submits in one batch took \(after - before) journal syncs")
        gate.open()
        try await server.shutdown()
    }

    @Test func aMetricsPortInUseStopsStartUpNamingTheKey() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["metrics_listen": "127.0.0.1:\(server.port)"])
        defer { daemon.cleanUp() }
        try await daemon.start(waitUntilAnswering: false)
        #expect(daemon.terminateAfterExit() == 1)
        #expect(daemon.log.contains("cannot serve metrics on 127.0.0.1:\(server.port) (metrics_listen): Address already in use"), "\(daemon.log)")
        try await server.shutdown()
    }

    @Test func aMalformedMetricsListenIsRefusedAtStart() async throws {
        let daemon = try TestDaemon(configuration: ["metrics_listen": "9464"])
        defer { daemon.cleanUp() }
        try await daemon.start(waitUntilAnswering: false)
        #expect(daemon.terminateAfterExit() == 1)
        #expect(daemon.log.contains("metrics_listen in \(daemon.configPath) is '9464': expected HOST:PORT"), "\(daemon.log)")
    }
}

extension TestDaemon {
    /// Waits for a daemon that is expected to stop by itself; returns its exit status.
    func terminateAfterExit() -> Int32 {
        guard let process else { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
