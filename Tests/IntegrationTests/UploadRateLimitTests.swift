import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Rate limits on uploads: a resumable upload's appends are paced, measured where the bytes
/// arrive (the test server) over ten seconds; a plain upload says it cannot be paced.
@Suite("Upload rate limits")
struct UploadRateLimitTests {
    @Test(arguments: [ResumableProtocol.tus, .ietf])
    func aResumableUploadHoldsItsOwnLimit(protocol used: ResumableProtocol) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1501, size: 48 << 20)
        server.acceptResumableUploads("/files", protocol: used)
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(
            source, to: server.url("/files"), ["--resumable", used == .tus ? "tus" : "ietf", "--limit-rate", "1M"])
        func received() -> Int64 { server.resumableUploads(for: "/files").first?.bodyBytesReceived ?? 0 }
        try await waitUntil("the first appends", seconds: 60) { received() > 0 }
        try await Task.sleep(for: .seconds(1))
        let (before, start) = (received(), ContinuousClock.now)
        try await Task.sleep(for: .seconds(10))
        let (after, end) = (received(), ContinuousClock.now)
        let elapsed = end - start
        let rate = Double(after - before) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        let limit = Double(1 << 20)
        print("upload \(used) --limit-rate 1M: measured \(Int(rate)) bytes/s against a limit of \(Int(limit)) (\(String(format: "%+.1f", (rate - limit) / limit * 100)) %)")
        #expect(abs(rate - limit) <= limit * 0.1, "measured \(Int(rate)) bytes/s against a limit of \(Int(limit))")
        let running = try daemon.job(job.id)
        #expect(running.pacedRate == 1 << 20 && running.warning == nil, "\(running)")
        let cancelled = try await runTransferctl(["--socket", daemon.socketPath, "cancel", job.id])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        try await server.shutdown()
    }

    @Test func aPlainUploadSaysItsLimitCannotBeHeld() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1502, size: 64 << 20)
        server.acceptUploads("/plain", behaviour: .neverAnswer())
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/plain"), ["--resumable", "off", "--limit-rate", "1M"])
        var shown: Job?
        try await waitUntil("the upload to run", seconds: 60) {
            shown = try daemon.job(job.id)
            return shown?.state == .running && shown?.warning != nil
        }
        #expect(shown?.warning?.contains("cannot be held for this upload") == true, "\(String(describing: shown?.warning))")
        _ = try await runTransferctl(["--socket", daemon.socketPath, "cancel", job.id])
        try await server.shutdown()
    }
}
