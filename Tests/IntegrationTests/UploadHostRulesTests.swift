import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Every URL an upload contacts passes the host rules (the creation, the resource its `Location`
/// names, on every attempt and after a restart), and the job's credentials go only to the job
/// URL's origin. The test server runs on loopback: the job URL names it `localhost`, which
/// `allowed_hosts` lets through, while `127.0.0.1` stands for the internal address a hostile
/// server points to.
@Suite("Upload host rules")
struct UploadHostRulesTests {
    static func mode(_ used: ResumableProtocol) -> String { used == .tus ? "tus" : "ietf" }

    @Test(arguments: [(ResumableProtocol.tus, false), (.tus, true), (.ietf, false), (.ietf, true)])
    func aLocationOnARefusedHostFailsTheUploadAndReachesNothing(protocol used: ResumableProtocol, schemeRelative: Bool) async throws {
        let server = try await TestHTTPServer.start()
        // The internal service: it would answer anything, and show it in the job's response.
        let service = try RawHTTPServer { _ in
            rawAnswer("201 Created", ["Content-Length: 15", "Upload-Offset: 1000", "Upload-Complete: ?1"], body: Array("internal-secret".utf8))
        }
        defer { service.stop() }
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0, "allowed_hosts": ["localhost"]])
        defer { daemon.cleanUp() }
        let prefix = (schemeRelative ? "//" : "http://") + "127.0.0.1:\(service.port)"
        server.acceptResumableUploads("/files", protocol: used, behaviour: .location(prefix: prefix))
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 901, size: 1000), to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(
            source, to: "http://localhost:\(server.port)/files",
            ["--resumable", Self.mode(used), "-H", "Authorization: Bearer s3cret-token"], wait: true)
        #expect(job.state == .failed)
        #expect(job.error?.code == .hostNotAllowed, "\(String(describing: job.error))")
        let message = job.error?.message ?? ""
        #expect(message.contains("127.0.0.1") && message.contains("allowed_hosts") && message.contains(daemon.configPath), "\(message)")
        #expect(job.attempts == 1, "a refused host is final")
        #expect(service.connections == 0, "the internal service was contacted")
        #expect(job.response?.body?.contains("internal-secret") != true)
        let shown = try await runTransferctl(["status", job.id, "--json", "--socket", daemon.socketPath])
        #expect(!shown.stdout.contains("internal-secret"), "\(shown.stdout)")
        try await server.shutdown()
    }

    @Test(arguments: [ResumableProtocol.tus, .ietf])
    func aLocationOnAnotherAllowedOriginGetsTheUploadWithoutCredentials(protocol used: ResumableProtocol) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 902, size: 100_000)
        // The same server under another name: another origin.
        server.acceptResumableUploads("/files", protocol: used, behaviour: .location(prefix: "http://127.0.0.1:\(server.port)"))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(
            source, to: "http://localhost:\(server.port)/files",
            ["--resumable", Self.mode(used), "-H", "Authorization: Bearer s3cret-token", "-H", "Cookie: sid=42", "-H", "X-Trace: t1"],
            wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        let upload = try #require(server.resumableUploads(for: "/files").first)
        #expect(upload.complete && upload.sha256 == content.sha256Hex(), "\(upload)")
        let creation = server.allRequests().filter { $0.path == "/files" && $0.method != "OPTIONS" }
        #expect(!creation.isEmpty && creation.allSatisfy { $0.header("Authorization") == "Bearer s3cret-token" }, "\(creation)")
        let appends = server.allRequests().filter { $0.path == upload.resourcePath }
        #expect(!appends.isEmpty)
        for request in appends {
            #expect(request.header("Authorization") == nil && request.header("Cookie") == nil, "credentials sent to another origin: \(request)")
            #expect(request.header("X-Trace") == "t1", "\(request)")
        }
        try await server.shutdown()
    }

    @Test func aRestartChecksTheJournaledUploadURLAgain() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 903, size: 24 << 20)
        // The resource is on 127.0.0.1; the upload stalls in its second append, then the daemon
        // is killed, and comes back with host rules that allow only localhost.
        server.acceptResumableUploads(
            "/files", protocol: .tus,
            behaviour: ResumableBehaviour.location(prefix: "http://127.0.0.1:\(server.port)").combined(with: .stallAtOffset((8 << 20) + 4321)))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: "http://localhost:\(server.port)/files", ["--resumable", "tus"])
        try await waitUntil("the server to hold 8 MiB", seconds: 120) {
            (server.resumableUploads(for: "/files").first?.offset ?? 0) >= 8 << 20
        }
        let upload = try #require(server.resumableUploads(for: "/files").first)
        try await waitUntil("the daemon to journal the upload URL", seconds: 30) {
            try daemon.job(job.id).uploadUrl?.hasSuffix(upload.resourcePath) == true
        }
        daemon.kill9()
        let before = server.allRequests().count
        try daemon.writeConfiguration(["retry_initial_delay_seconds": 0, "allowed_hosts": ["localhost"]])
        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id, seconds: 60)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .hostNotAllowed, "\(String(describing: finished.error))")
        let after = server.allRequests().dropFirst(before)
        // Not even the DELETE of the abandoned upload goes there.
        #expect(!after.contains { $0.path == upload.resourcePath }, "the refused resource was asked: \(Array(after))")
        try await server.shutdown()
    }
}
