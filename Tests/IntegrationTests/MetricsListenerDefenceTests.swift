import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The metrics listener against hostile clients: more connections than the daemon has
/// descriptors, pipelined requests whose answers are never read, connections that say nothing.
@Suite("The metrics listener survives its clients")
struct MetricsListenerDefenceTests {
    static let scrape = Array("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)

    /// Waits until the non-blocking connection `fd` is established.
    static func waitConnected(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&poller, 1, 5000) > 0 && poller.revents & Int16(POLLOUT) != 0
    }

    @Test func moreConnectionsThanTheDaemonHasDescriptorsLeaveItServing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["metrics_listen": "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 2001, size: 100_000)
        server.serve("/file", content: content)
        try await daemon.start()
        let port = try #require(try await MetricsTests.metricsURL(daemon).port)
        // systemd's default soft limit, as the daemon of the report had, with no way to raise it.
        #expect(RawSocket.limitDescriptors(of: daemon.pid, to: 1024))

        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<1100 {
            if let fd = RawSocket.connectTCP(port: port) { held.append(fd) }
        }
        #expect(held.count == 1100)
        // The connections beyond metrics_max_connections are answered 503 and closed: the last one
        // hears it once the daemon has accepted every connection before it.
        let last = try #require(held.last)
        var answer: [UInt8]?
        try await waitUntil("the last connection's answer", seconds: 30) {
            answer = RawSocket.read(last, seconds: 0.2)
            return answer != nil
        }
        let text = String(decoding: answer ?? [], as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 503"), "\(text)")
        #expect(text.contains("metrics_max_connections"), "\(text)")

        // With all 1,100 still open on this side, the daemon holds few descriptors and serves.
        let open = RawSocket.openDescriptors(of: daemon.pid)
        #expect(open < 256, "the daemon holds \(open) descriptors")
        let started = ContinuousClock.now
        let status = try runProcess("/usr/bin/timeout", ["10", Binaries.transferctl, "--socket", daemon.socketPath, "status"])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(ContinuousClock.now - started < .seconds(5))
        let job = try daemon.submit(server.url("/file"), to: daemon.destination("file"))
        #expect(try await daemon.waitForTerminal(job.id, seconds: 30).state == .completed)
        #expect(try sha256Hex(ofFile: daemon.destination("file")) == content.sha256Hex())
        // A scrape after the others went away is answered again.
        for fd in held { close(fd) }
        held = []
        try await waitUntil("a scrape to be answered again", seconds: 30) {
            (try? await MetricsTests.get(try await MetricsTests.metricsURL(daemon)).status) == 200
        }
        #expect(daemon.process?.isRunning == true, "\(daemon.log)")
        try await server.shutdown()
    }

    @Test func aClientThatPipelinesScrapesWithoutReadingThemIsNotReadFrom() async throws {
        let daemon = try TestDaemon(configuration: ["metrics_listen": "127.0.0.1:0"])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let url = try await MetricsTests.metricsURL(daemon)
        let port = try #require(url.port)
        #expect(try await MetricsTests.get(url).status == 200)
        let before = try #require(RawSocket.residentBytes(of: daemon.pid))

        let fd = try #require(RawSocket.connectTCP(port: port))
        defer { close(fd) }
        #expect(Self.waitConnected(fd))
        let batch = Array(repeating: Self.scrape, count: 200).flatMap { $0 }
        var pending = batch[...]
        var stalledSince: ContinuousClock.Instant?
        var sent = 0
        let start = ContinuousClock.now
        // Requests as fast as the socket takes them, never a byte read back, until the daemon
        // stops taking them (its socket buffers and ours are full) or ten seconds pass.
        while ContinuousClock.now - start < .seconds(10) {
            let n = RawSocket.sendSome(fd, Array(pending))
            if n == 0 {
                let since = stalledSince ?? ContinuousClock.now
                stalledSince = since
                if ContinuousClock.now - since > .seconds(2) { break }
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            stalledSince = nil
            sent += n
            pending = pending.dropFirst(n)
            if pending.isEmpty { pending = batch[...] }
        }
        #expect(stalledSince != nil, "the daemon kept reading: \(sent) bytes of requests taken")
        // What the daemon took in (megabytes of requests sit in the socket buffers) must not turn
        // into answers held in memory while it works through them.
        try await Task.sleep(for: .seconds(8))
        let after = try #require(RawSocket.residentBytes(of: daemon.pid))
        #expect(after - before < 24 << 20, "resident memory grew from \(before >> 20) MiB to \(after >> 20) MiB after \(sent) bytes of requests")
        // Other scrapers are served meanwhile.
        #expect(try await MetricsTests.get(url).status == 200)
    }

    @Test func idleMetricsConnectionsAreClosed() async throws {
        let daemon = try TestDaemon(configuration: ["metrics_listen": "127.0.0.1:0", "metrics_idle_timeout_seconds": 1])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let port = try #require(try await MetricsTests.metricsURL(daemon).port)

        // One that says nothing, one that keeps its connection after an answer.
        let silent = try #require(RawSocket.connectTCP(port: port))
        defer { close(silent) }
        let keptAlive = try #require(RawSocket.connectTCP(port: port))
        defer { close(keptAlive) }
        #expect(Self.waitConnected(keptAlive))
        #expect(RawSocket.sendSome(keptAlive, Self.scrape) == Self.scrape.count)
        var answer: [UInt8] = []
        while !String(decoding: answer, as: UTF8.self).contains("transferd_connections") {
            guard let more = RawSocket.read(keptAlive, seconds: 5), !more.isEmpty else { break }
            answer += more
        }
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200"))

        let started = ContinuousClock.now
        for fd in [silent, keptAlive] {
            var end: [UInt8]?
            while ContinuousClock.now - started < .seconds(10), end != [] {
                end = RawSocket.read(fd, seconds: 0.5)
                if let bytes = end, !bytes.isEmpty { end = nil }
            }
            #expect(end == [], "the connection was not closed")
        }
        #expect(ContinuousClock.now - started < .seconds(6))
    }
}
