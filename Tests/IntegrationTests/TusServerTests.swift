import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Uploads to a real tus server from PyPI (tuspyserver), which refuses to resume an upload created
/// without `filename` and `filetype` metadata.
@Suite struct TusServerTests {
    @Test func aTusUploadKilledMidwayResumesAndCompletes() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let server = try await TusServer(in: daemon.directory)
        defer { server.stop() }
        try await daemon.start()
        let content = TestContent(seed: 4242, size: 6 << 20)
        let file = daemon.directory + "/backup.bin"
        try writeContent(content, to: file)

        let run = try await runTransferctl(
            ["upload", file, server.url, "--resumable", "tus", "--limit-rate", "2M", "--json", "--socket", daemon.socketPath])
        #expect(run.status == 0, "\(run.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(run.stdout.utf8))
        try await waitUntil("a part of the upload to be sent", seconds: 30) {
            (try daemon.job(job.id).bytesSent ?? 0) >= 2 << 20
        }
        daemon.kill9()
        try await daemon.start()
        let ended = try await daemon.waitForTerminal(job.id, seconds: 60)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")\n\(server.log)")
        let stored = try Data(contentsOf: URL(fileURLWithPath: server.done + "/backup.bin"))
        #expect(Int64(stored.count) == content.size)
        #expect(try sha256Hex(ofFile: server.done + "/backup.bin") == content.sha256Hex())
        #expect(!server.log.contains("missing required field"), "the server resumed the upload: \(server.log)")
    }
}
