import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// The engine's several connections, its pace and its waits against a real nginx (its `Range`
/// answers, ETags and `limit_rate`), not the in-repo test server, which agrees with the daemon by
/// construction.
@Suite struct RealServerEngineTests {
    static let mib: Int64 = 1 << 20

    /// A daemon and an nginx serving `content` at `path` (below `slow/`, `limit_rate 1m` per connection).
    private func started(_ content: TestContent, at path: String, name: String = #function) async throws -> (TestDaemon, Nginx) {
        let daemon = try TestDaemon(name: name)
        let nginx = try await Nginx(in: daemon.directory)
        try FileManager.default.createDirectory(atPath: nginx.root + "/slow", withIntermediateDirectories: true)
        try nginx.serve(content.allBytes(), at: path)
        try await daemon.start()
        return (daemon, nginx)
    }

    private func pauseAndResume(_ daemon: TestDaemon, _ id: String, after bytes: Int64) async throws -> Job {
        try await waitUntil("\(bytes) bytes to arrive", seconds: 60) { try daemon.job(id).bytesReceived >= bytes }
        let paused = try await runTransferctl(["--socket", daemon.socketPath, "pause", id])
        #expect(paused.status == 0, "\(paused.stderr)")
        let held = try daemon.job(id)
        #expect(held.state == .queued && held.paused == true, "\(held)")
        let resumed = try await runTransferctl(["--socket", daemon.socketPath, "resume", id])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        return held
    }

    @Test func severalConnectionsPauseResumeAndLandTheFileWhole() async throws {
        // About 16 s at nginx's pace: a test held up for seconds by a loaded machine still
        // pauses the download midway.
        let content = TestContent(seed: 2201, size: 64 * Self.mib)
        let (daemon, nginx) = try await started(content, at: "slow/big.bin")
        defer { nginx.stop(); daemon.cleanUp() }
        var params = Submit.Params(url: nginx.url("slow/big.bin"), destination: daemon.destination("big.bin"), sha256: content.sha256Hex())
        params.segments = 4
        params.id = "big"
        _ = try daemon.submit(params)
        let held = try await pauseAndResume(daemon, "big", after: 3 * Self.mib)
        #expect(held.bytesReceived >= 3 * Self.mib, "the bytes of every connection are kept: \(held.bytesReceived)")
        let done = try await daemon.waitForTerminal("big", seconds: 120)
        #expect(done.state == .completed, "\(done.error?.message ?? "")")
        #expect(try sha256Hex(ofFile: daemon.destination("big.bin")) == content.sha256Hex())
        // The lead and its helpers, before and after the pause: ranged requests nginx answered.
        let ranged = nginx.accessLog.filter { $0.hasPrefix("GET /slow/big.bin 206") }
        #expect(ranged.count >= 5, "\(nginx.accessLog)")
    }

    @Test func aPacedDownloadPausesBetweenItsRequestsAndLandsWhole() async throws {
        // About 12 s at its pace, for the same reason.
        let content = TestContent(seed: 2202, size: 3 * Self.mib)
        let (daemon, nginx) = try await started(content, at: "paced.bin")
        defer { nginx.stop(); daemon.cleanUp() }
        var params = Submit.Params(url: nginx.url("paced.bin"), destination: daemon.destination("paced.bin"), sha256: content.sha256Hex())
        params.limitRate = "256k"
        params.id = "paced"
        _ = try daemon.submit(params)
        // Paced, the download waits between its segments: the pause ends that wait.
        let held = try await pauseAndResume(daemon, "paced", after: 256 << 10)
        #expect(held.bytesReceived < content.size, "\(held)")
        let done = try await daemon.waitForTerminal("paced", seconds: 120)
        #expect(done.state == .completed, "\(done.error?.message ?? "")")
        #expect(try sha256Hex(ofFile: daemon.destination("paced.bin")) == content.sha256Hex())
        #expect(nginx.accessLog.filter { $0.hasPrefix("GET /paced.bin 206") }.count >= 3, "one ranged request per paced segment: \(nginx.accessLog)")
    }
}
