import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Rate limits held by pacing ranged segments, measured where the bytes leave: at the test server,
/// over at least ten seconds while the jobs run: never more than 10 % above the limit, and not held
/// far below it (a loaded machine may not reach it, so the lower bound is loose).
@Suite("Download rate limits")
struct DownloadRateLimitTests {
    /// Bytes the server sent for `paths` over `seconds`, once each has started; in bytes per second.
    private func measuredRate(_ server: TestHTTPServer, _ paths: [String], seconds: Double = 10) async throws -> Double {
        try await waitUntil("every download to start", seconds: 60) { paths.allSatisfy { server.bytesSent(for: $0) > 0 } }
        // Past the first segments, so every job runs at its share.
        try await Task.sleep(for: .seconds(1))
        let total = { paths.reduce(Int64(0)) { $0 + server.bytesSent(for: $1) } }
        let (before, start) = (total(), ContinuousClock.now)
        try await Task.sleep(for: .seconds(seconds))
        let (after, end) = (total(), ContinuousClock.now)
        let elapsed = end - start
        return Double(after - before) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    private func expectWithinTenPercent(_ rate: Double, of limit: Double, _ what: String) {
        print("\(what): measured \(Int(rate)) bytes/s against a limit of \(Int(limit)) (\(String(format: "%+.1f", (rate - limit) / limit * 100)) %)")
        #expect(rate <= limit * 1.1 && rate >= limit * 0.5, "\(what): measured \(Int(rate)) bytes/s against a limit of \(Int(limit))")
    }

    @Test func aJobsOwnLimitHoldsItsRate() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/one.bin", content: TestContent(seed: 81, size: 40 << 20))
        try await daemon.start()
        let submitted = try await runTransferctl([
            "submit", "--socket", daemon.socketPath, "--limit-rate", "1M", "--json", server.url("/one.bin"), daemon.destination("one.bin"),
        ])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(submitted.stdout.utf8))
        #expect(job.limitRate == 1 << 20)

        expectWithinTenPercent(try await measuredRate(server, ["/one.bin"]), of: Double(1 << 20), "--limit-rate 1M")
        let running = try daemon.job(job.id)
        #expect(running.state == .running)
        #expect(running.pacedRate == 1 << 20)
        #expect(running.warning == nil)
        let detail = try await runTransferctl(["status", "--socket", daemon.socketPath, job.id])
        #expect(detail.stdout.contains("limit rate:") && detail.stdout.contains("1.0 MiB/s"), "\(detail.stdout)")
        // Never a request for the whole rest of the file: segments of about a quarter second each.
        #expect(server.requests(for: "/one.bin").count >= 10)
        _ = try daemon.client().call(Cancel.self, .init(id: job.id))
        try await server.shutdown()
    }

    @Test func backgroundJobsShareTheBackgroundLimitAndOthersAreNotHeldByIt() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["background_max_rate": "1M"])
        defer { daemon.cleanUp() }
        server.serve("/bg.bin", content: TestContent(seed: 95, size: 40 << 20))
        server.serve("/fg.bin", content: TestContent(seed: 96, size: 8 << 20))
        try await daemon.start()
        let background = try await runTransferctl([
            "submit", "--socket", daemon.socketPath, "--priority", "background", "--json", server.url("/bg.bin"), daemon.destination("bg.bin"),
        ])
        #expect(background.status == 0, "\(background.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(background.stdout.utf8))
        expectWithinTenPercent(try await measuredRate(server, ["/bg.bin"]), of: Double(1 << 20), "background_max_rate 1M")
        // A normal job is not paced by the background class's limit: 8 MiB arrive well within the 8 s 1 MiB/s would take.
        let normal = try daemon.submit(server.url("/fg.bin"), to: daemon.destination("fg.bin"))
        let finished = try await daemon.waitForTerminal(normal.id, seconds: 60)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        if let started = finished.startedAt, let ended = finished.finishedAt {
            #expect(ended.timeIntervalSince(started) < 6, "a normal job took \(ended.timeIntervalSince(started)) s for 8 MiB")
        }
        _ = try daemon.client().call(Cancel.self, .init(id: job.id))
        try await server.shutdown()
    }

    @Test func theGlobalLimitIsSharedByRunningJobs() async throws {
        let server = try await TestHTTPServer.start()
        // Three at once to one host: above max_connections_per_host's default of 2.
        let daemon = try TestDaemon(configuration: ["max_rate": "4M", "max_connections_per_host": 4])
        defer { daemon.cleanUp() }
        let paths = ["/a.bin", "/b.bin", "/c.bin"]
        for (index, path) in paths.enumerated() { server.serve(path, content: TestContent(seed: UInt64(90 + index), size: 32 << 20)) }
        try await daemon.start()
        var ids: [String] = []
        for path in paths { ids.append(try daemon.submit(server.url(path), to: daemon.destination(String(path.dropFirst()))).id) }
        try await waitUntil("three jobs to run") { try ids.allSatisfy { try daemon.job($0).state == .running } }

        expectWithinTenPercent(try await measuredRate(server, paths), of: Double(4 << 20), "max_rate 4M over three jobs")
        for id in ids {
            let paced = try #require(try daemon.job(id).pacedRate)
            #expect(abs(paced - (4 << 20) / 3) <= 1, "each job's share")
        }
        for id in ids { _ = try daemon.client().call(Cancel.self, .init(id: id)) }
        try await server.shutdown()
    }

    @Test func aWindowChangedOnReloadTakesHoldOfTheRunningJob() async throws {
        let server = try await TestHTTPServer.start()
        let window = { (rate: String) -> [String: Any] in
            ["rate_windows": ["always": ["days": "mon-sun", "from": "00:00", "to": "24:00", "max_rate": rate]]]
        }
        let daemon = try TestDaemon(configuration: window("1M"))
        defer { daemon.cleanUp() }
        server.serve("/w.bin", content: TestContent(seed: 95, size: 64 << 20))
        try await daemon.start()
        let job = try daemon.submit(server.url("/w.bin"), to: daemon.destination("w.bin"))
        expectWithinTenPercent(try await measuredRate(server, ["/w.bin"]), of: Double(1 << 20), "a window of 1M")

        try daemon.writeConfiguration(window("2M"))
        let reloaded = try daemon.client().call(Reload.self, .init())
        #expect(reloaded.applied == ["rate_windows"])
        expectWithinTenPercent(try await measuredRate(server, ["/w.bin"]), of: Double(2 << 20), "the window reloaded as 2M")
        #expect(try daemon.job(job.id).state == .running)
        _ = try daemon.client().call(Cancel.self, .init(id: job.id))
        try await server.shutdown()
    }

    @Test func aServerWithoutRangesIsNamedAsKeepingTheLimitFromHolding() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/whole.bin", content: TestContent(seed: 97, size: 8 << 20), behaviour: .all(.ignoreRange, .trickle(bytesPerSecond: 1 << 20)))
        try await daemon.start()
        var params = Submit.Params(url: server.url("/whole.bin"), destination: daemon.destination("whole.bin"))
        params.limitRate = "100K"
        let job = try daemon.submit(params)
        try await waitUntil("the warning") { try daemon.job(job.id).warning != nil }
        #expect(try daemon.job(job.id).warning?.contains("server ignores ranges") == true)
        _ = try daemon.client().call(Cancel.self, .init(id: job.id))
        try await server.shutdown()
    }

    @Test func aRateThatIsNotOneIsRefusedNamingTheFix() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let refused = try await runTransferctl(["submit", "--socket", daemon.socketPath, "--limit-rate", "2X", "http://127.0.0.1:9/f", daemon.destination("f")])
        #expect(refused.status == 2, "\(refused.stderr)")
        #expect(refused.stderr.contains("'2X' is not a rate: give bytes per second with an optional K, M or G suffix, e.g. 2M"), "\(refused.stderr)")
        var params = Submit.Params(url: "http://127.0.0.1:9/f", destination: daemon.destination("f"))
        params.limitRate = "2X"
        #expect(throws: (any Error).self) { try daemon.submit(params) }
    }
}
