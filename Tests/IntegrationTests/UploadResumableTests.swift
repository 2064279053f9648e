import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Resumable uploads with the real daemon and transferctl against the test server's tus 1.0 and
/// IETF endpoints: a dropped connection and a kill -9 at 40 % continue from the server's offset,
/// and a server that understates its offset gets the missing bytes again.
@Suite("Resumable uploads")
struct UploadResumableTests {
    static let size: Int64 = 200 << 20
    /// The daemon's append size: at most this much may be sent twice.
    static let segment: Int64 = 8 << 20
    /// About 40 %, and not where one of the daemon's appends ends.
    static let cut: Int64 = (81 << 20) + 12_345

    static func mode(_ used: ResumableProtocol) -> String { used == .tus ? "tus" : "ietf" }

    @Test(arguments: [ResumableProtocol.ietf, .tus])
    func aConnectionDroppedAt40PercentContinuesFromTheServersOffset(protocol used: ResumableProtocol) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 81, size: Self.size)
        server.acceptResumableUploads("/files", protocol: used, behaviour: .dropAtOffset(Self.cut))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/files"), ["--resumable", "auto"], wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.uploadProtocol == (used == .tus ? .tus : .ietf))
        let uploads = server.resumableUploads(for: "/files")
        #expect(uploads.count == 1, "one upload resource, continued: \(uploads)")
        let upload = try #require(uploads.first)
        #expect(upload.complete && upload.sha256 == content.sha256Hex(), "\(upload)")
        #expect(upload.bodyBytesReceived <= Self.size + Self.segment, "\(upload)")
        #expect(upload.requests.contains { $0.hasSuffix("dropped") }, "the connection was dropped once: \(upload)")
        #expect(job.attempts == 2)
        #expect(job.uploadUrl?.hasSuffix(upload.resourcePath) == true)
        print("resumable \(used) drop at 40 %: \(upload.bodyBytesReceived) body bytes received for \(Self.size): \(upload)")
        try await server.shutdown()
    }

    @Test(arguments: [ResumableProtocol.ietf, .tus])
    func aKill9At40PercentContinuesFromTheServersOffsetAfterTheRestart(protocol used: ResumableProtocol) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 82, size: Self.size)
        // The server stops reading once it holds 40 %: the upload is in the middle of an append
        // when the daemon is killed.
        server.acceptResumableUploads("/files", protocol: used, behaviour: .stallAtOffset(Self.cut))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/files"), ["--resumable", Self.mode(used)])
        try await waitUntil("the server to hold 40 %", seconds: 120) {
            (server.resumableUploads(for: "/files").first?.offset ?? 0) >= Self.cut
        }
        daemon.kill9()
        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id, seconds: 240)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        let uploads = server.resumableUploads(for: "/files")
        #expect(uploads.count == 1, "the restarted daemon continued the same upload: \(uploads)")
        let upload = try #require(uploads.first)
        #expect(upload.complete && upload.sha256 == content.sha256Hex(), "\(upload)")
        #expect(upload.bodyBytesReceived <= Self.size + Self.segment, "\(upload)")
        #expect(upload.requests.contains { $0.hasSuffix("stalled") }, "the daemon was killed in an append: \(upload)")
        try await waitUntil("the spool copy is freed") { daemon.spoolFiles().isEmpty }
        print("resumable \(used) kill -9 at 40 %: \(upload.bodyBytesReceived) body bytes received for \(Self.size)")
        try await server.shutdown()
    }

    @Test(arguments: [ResumableProtocol.ietf, .tus])
    func aCancelledUploadsResourceIsDeletedOnTheServer(protocol used: ResumableProtocol) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 84, size: 24 << 20)
        // Stalled in the middle of an append (not where one ends), so the upload is running when cancelled.
        server.acceptResumableUploads("/files", protocol: used, behaviour: .stallAtOffset((8 << 20) + 12_345))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/files"), ["--resumable", Self.mode(used)])
        try await waitUntil("the server to hold 8 MiB", seconds: 120) {
            (server.resumableUploads(for: "/files").first?.offset ?? 0) >= 8 << 20
        }
        let cancelled = try await runTransferctl(["--socket", daemon.socketPath, "cancel", job.id])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        // Nobody will complete the upload: the server is asked to drop what it holds.
        try await waitUntil("the server to be asked to delete the upload", seconds: 60) {
            server.resumableUploads(for: "/files").first?.requests.contains("DELETE terminated") == true
        }
        #expect(try daemon.job(job.id).state == .cancelled)
        #expect(daemon.spoolFiles().isEmpty, "\(daemon.spoolFiles())")
        try await server.shutdown()
    }

    @Test(arguments: [ResumableProtocol.ietf, .tus])
    func aServerThatUnderstatesItsOffsetGetsTheMissingBytesAgain(protocol used: ResumableProtocol) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 83, size: 24 << 20)
        // A drop makes the daemon ask for the offset; the server then says 3 MiB less than it got.
        server.acceptResumableUploads(
            "/files", protocol: used,
            behaviour: ResumableBehaviour.dropAtOffset((10 << 20) + 777).combined(with: .understateOffset(by: 3 << 20)))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/files"), ["--resumable", Self.mode(used)], wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        let upload = try #require(server.resumableUploads(for: "/files").first)
        #expect(upload.complete && upload.sha256 == content.sha256Hex(), "\(upload)")
        #expect(upload.bodyBytesReceived >= content.size + (3 << 20), "the understated bytes were sent again: \(upload)")
        try await server.shutdown()
    }

    @Test func autoSendsAPlainUploadToAServerThatAnnouncesNothing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 84, size: 1 << 20)
        server.acceptUploads("/plain")
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/plain"), wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.uploadProtocol == .plain && job.uploadUrl == nil)
        #expect(server.uploads(for: "/plain").map(\.sha256) == [content.sha256Hex()])
        let shown = try await runTransferctl(["status", job.id, "--socket", daemon.socketPath])
        #expect(shown.stdout.contains("plain (no resume)"), "\(shown.stdout)")
        try await server.shutdown()
    }

    @Test func aWrongResumableModeIsRefusedBeforeAnythingIsSent() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 85, size: 1024), to: source)
        try await daemon.start()
        let run = try await daemon.upload(source, to: "http://127.0.0.1:9/x", ["--resumable", "sometimes"])
        #expect(run.status == 2 && run.stderr.contains("--resumable must be auto, ietf, tus or off"), "\(run.stderr)")
        #expect(daemon.spoolFiles().isEmpty)
    }
}
