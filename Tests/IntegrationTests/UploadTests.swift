import Crypto
import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

@Suite("Uploads")
struct UploadTests {
    @Test(arguments: ["PUT", "POST"])
    func a200MiBFileArrivesExactly(method: String) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(name: "upload\(method)")
        defer { daemon.cleanUp() }
        server.acceptUploads("/store", behaviour: .requireContentLength)
        let content = TestContent(seed: 70, size: 200 << 20)
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/store"), ["-X", method, "--content-type", "application/x-test"], wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.kind == .upload)
        #expect(job.bytesSent == content.size)
        #expect(job.totalBytes == content.size)
        #expect(job.sha256 == content.sha256Hex())
        #expect(job.response?.status == 201)
        #expect(job.response?.location == "/store/stored/1")
        #expect(job.response?.body?.contains(content.sha256Hex()) == true, "the response body is kept: \(String(describing: job.response))")
        let received = try #require(server.uploads(for: "/store").last)
        #expect(received.method == method)
        #expect(received.sha256 == content.sha256Hex())
        #expect(received.bytes == content.size)
        #expect(received.header("Content-Length") == String(content.size))
        #expect(received.header("Transfer-Encoding") == nil)
        #expect(received.header("Content-Type") == "application/x-test")
        let digest = Data(content.digest(SHA256.self)).base64EncodedString()
        #expect(received.header("Content-Digest") == "sha-256=:\(digest):")
        // Freed once the end is on disk, which a status may show a moment before.
        try await waitUntil("the spool copy is freed") { daemon.spoolFiles().isEmpty }
        try await server.shutdown()
    }

    @Test func theSourceReplacedRightAfterSubmitChangesNothing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.acceptUploads("/store")
        let original = TestContent(seed: 71, size: 8 << 20)
        let source = daemon.directory + "/source.bin"
        try writeContent(original, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/store"))
        try FileManager.default.removeItem(atPath: source)
        try writeContent(original.replacement, to: source)
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(server.uploads(for: "/store").last?.sha256 == original.sha256Hex())
        #expect(finished.source == source)
        try await server.shutdown()
    }

    @Test func aPlainPutInterruptedIsSentAgainFromByteZero() async throws {
        let server = try await TestHTTPServer.start()
        // A drop the sending side does not see at once (the server stops reading before it
        // closes) ends the attempt at the idle timeout: kept short so the retry comes soon.
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0, "idle_timeout_seconds": 5])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 72, size: 32 << 20)
        server.acceptUploads("/store", behaviour: .dropAfter(bytes: content.size * 4 / 10))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/store"), ["--resumable", "off"], wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.attempts == 2)
        // A request that died on a reused connection before a byte of its body (libcurl sends it
        // again on a new one) is not an attempt.
        let received = server.uploads(for: "/store").filter { $0.bytes > 0 || $0.status != nil }
        #expect(received.count == 2, "\(received)")
        #expect(received.first?.bytes == content.size * 4 / 10)
        #expect(received.first?.status == nil)
        #expect(received.last?.bytes == content.size)
        #expect(received.last?.sha256 == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func a503WithRetryAfterIsRetried() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 73, size: 1 << 20)
        server.acceptUploads("/store", behaviour: .status(code: 503, times: 1, retryAfter: "1"))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/store"), wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(server.uploads(for: "/store").map(\.status) == [503, 201])
        #expect(server.uploads(for: "/store").last?.sha256 == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func lengthRequiredAndTooLargeFailWithWhatToDo() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.acceptUploads("/needs-length", behaviour: .status(code: 411, times: 10))
        server.acceptUploads("/small-only", behaviour: .refuseLargerThan(1 << 20))
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 74, size: 2 << 20), to: source)
        try await daemon.start()

        let lengthRun = try await daemon.upload(source, to: server.url("/needs-length"), ["-X", "PATCH", "--wait"])
        #expect(lengthRun.status == 1)
        let length = try await daemon.waitForTerminal(lengthRun.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(length.state == .failed)
        #expect(length.error?.httpStatus == 411)
        #expect(length.error?.message.contains("Content-Length") == true, "\(String(describing: length.error?.message))")
        #expect(length.error?.message.contains("upload refused by the test server") == true, "the server's body is quoted")

        let large = try await daemon.uploadJob(source, to: server.url("/small-only"), wait: true)
        #expect(large.state == .failed)
        #expect(large.error?.httpStatus == 413)
        #expect(large.error?.message.contains("2.0 MiB") == true && large.error?.message.contains("client_max_body_size") == true, "\(String(describing: large.error?.message))")
        #expect(large.attempts == 1, "a 413 is not retried")
        try await waitUntil("failed uploads free their copies") { daemon.spoolFiles().isEmpty }
        try await server.shutdown()
    }

    @Test func aFullSpoolRefusesClearlyAcceptsNothingAndTheDaemonGoesOn() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["upload_spool_bytes_per_user": 4 << 20])
        defer { daemon.cleanUp() }
        server.acceptUploads("/later", behaviour: .status(code: 503, times: 100, retryAfter: "3600"))
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 75, size: 3 << 20), to: source)
        try await daemon.start()
        let first = try await daemon.uploadJob(source, to: server.url("/later"))
        let refused = try await daemon.upload(source, to: server.url("/later"))
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("upload_spool_bytes_per_user"), "\(refused.stderr)")
        #expect(try daemon.jobs().map(\.id) == [first.id], "nothing was accepted")
        #expect(daemon.spoolFiles().count == 1, "\(daemon.spoolFiles())")
        let status = try await runTransferctl(["status", "--socket", daemon.socketPath])
        #expect(status.status == 0, "the daemon goes on serving")

        let cancel = try await runTransferctl(["cancel", first.id, "--socket", daemon.socketPath])
        #expect(cancel.status == 0, "\(cancel.stderr)")
        #expect(daemon.spoolFiles().isEmpty, "a cancelled upload frees its copy")
        let again = try await daemon.upload(source, to: server.url("/later"))
        #expect(again.status == 0, "\(again.stderr)")
        try await server.shutdown()
    }

    @Test func anUploadInterruptedByKill9IsSentAgainAfterTheRestart() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 76, size: 4 << 20)
        server.acceptUploads("/later", behaviour: .neverAnswer(times: 1))
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/later"))
        try await waitUntil("the body to arrive, unanswered") { server.uploads(for: "/later").first?.sha256 != nil }
        #expect(try daemon.job(job.id).state == .running)
        // A stray file in the spool (a hand-off never submitted) goes at the restart.
        FileManager.default.createFile(atPath: daemon.stateDirectory + "/spool/0123456789abcdef0123456789abcdef", contents: Data([1]))
        daemon.kill9()
        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2)
        #expect(server.uploads(for: "/later").map(\.status) == [nil, 201])
        #expect(server.uploads(for: "/later").last?.sha256 == content.sha256Hex())
        try await waitUntil("the spool copy is freed") { daemon.spoolFiles().isEmpty }
        try await server.shutdown()
    }

    @Test func daemonMemoryStaysBoundedUploading1GiB() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.acceptUploads("/store")
        let content = TestContent(seed: 77, size: 1 << 30)
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let baseline = try #require(daemon.peakRSS())
        let job = try await daemon.uploadJob(source, to: server.url("/store"))
        let finished = try await daemon.waitForTerminal(job.id, seconds: 300)
        let peak = try #require(daemon.peakRSS())
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(server.uploads(for: "/store").last?.sha256 == content.sha256Hex())
        let growth = peak - baseline
        #expect(growth < 96 << 20, "peak RSS grew by \(growth >> 20) MiB (baseline \(baseline >> 20) MiB, peak \(peak >> 20) MiB) for a 1 GiB upload")
        try await server.shutdown()
    }
}
