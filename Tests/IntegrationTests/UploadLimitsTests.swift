import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Uploads keep the same time limits as downloads (`--max-time`, the idle timeout), and a server
/// that answers appends without taking their bytes gets a bounded number of them, spaced by the
/// retry policy's back-off.
@Suite("Upload limits")
struct UploadLimitsTests {
    @Test func maxTimeStopsAPlainUploadToAServerThatReadsSlowly() async throws {
        let slow = try SlowReadingServer()
        defer { slow.stop() }
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 911, size: 64 << 20), to: source)
        try await daemon.start()
        let started = Date()
        let job = try await daemon.uploadJob(source, to: "http://127.0.0.1:\(slow.port)/slow", ["--resumable", "off", "--max-time", "5"])
        let finished = try await daemon.waitForTerminal(job.id, seconds: 30)
        let took = Date().timeIntervalSince(started)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .timeLimit, "\(String(describing: finished.error))")
        #expect(took < 15, "the upload ran \(took) s past --max-time 5")
        #expect(slow.bytesRead < 64 << 20)
    }

    @Test func theLowSpeedLimitStopsAnUploadToAServerThatReadsSlowly() async throws {
        let slow = try SlowReadingServer()
        defer { slow.stop() }
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 915, size: 64 << 20), to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(
            source, to: "http://127.0.0.1:\(slow.port)/slow",
            ["--resumable", "off", "--low-speed-limit", "1000000", "--low-speed-time", "2", "--max-attempts", "1"])
        let finished = try await daemon.waitForTerminal(job.id, seconds: 30)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .tooSlow, "\(String(describing: finished.error))")
        #expect(finished.error?.message.contains("low_speed_bytes_per_second") == true, "\(String(describing: finished.error))")
    }

    @Test func theIdleTimeoutStopsAPlainUploadToAServerThatStopsReading() async throws {
        // Reads 64 KiB once a minute: after the socket buffers fill, nothing moves for longer than the idle timeout.
        let stuck = try SlowReadingServer(chunk: 64 << 10, interval: .seconds(60))
        defer { stuck.stop() }
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 912, size: 64 << 20), to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(
            source, to: "http://127.0.0.1:\(stuck.port)/stuck", ["--resumable", "off", "--idle-timeout", "3", "--max-attempts", "1"])
        let finished = try await daemon.waitForTerminal(job.id, seconds: 40)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .timeout, "\(String(describing: finished.error))")
        #expect(finished.error?.message.contains("idle_timeout_seconds") == true, "\(String(describing: finished.error))")
    }

    @Test func aServerThatNeverLetsTheUploadAdvanceGetsABoundedNumberOfAppends() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0])
        defer { daemon.cleanUp() }
        server.acceptResumableUploads("/files", protocol: .tus, behaviour: .withholdLastByte)
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 913, size: 1000), to: source)
        try await daemon.start()
        let started = Date()
        let job = try await daemon.uploadJob(
            source, to: server.url("/files"), ["--resumable", "tus", "--max-time", "20", "--max-attempts", "4"])
        let finished = try await daemon.waitForTerminal(job.id, seconds: 40)
        let took = Date().timeIntervalSince(started)
        #expect(finished.state == .failed)
        #expect(finished.error?.message.contains("did not advance") == true, "\(String(describing: finished.error))")
        #expect(finished.attempts == 4, "the attempt limit ended it")
        #expect(took < 20, "\(took) s")
        let upload = try #require(server.resumableUploads(for: "/files").first)
        let appends = upload.requests.filter { $0.hasPrefix("PATCH") }
        // One append that advanced, then one per attempt that did not.
        #expect(appends.count <= 5, "\(appends.count) appends: \(upload)")
        try await server.shutdown()
    }

    @Test func maxTimeStopsAResumableUploadThatNeverAdvances() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 1, "retry_max_delay_seconds": 1])
        defer { daemon.cleanUp() }
        server.acceptResumableUploads("/files", protocol: .tus, behaviour: .withholdLastByte)
        let source = daemon.directory + "/source.bin"
        try writeContent(TestContent(seed: 914, size: 1000), to: source)
        try await daemon.start()
        let started = Date()
        let job = try await daemon.uploadJob(source, to: server.url("/files"), ["--resumable", "tus", "--max-time", "5", "--max-attempts", "1000"])
        let finished = try await daemon.waitForTerminal(job.id, seconds: 30)
        let took = Date().timeIntervalSince(started)
        #expect(finished.state == .failed, "\(String(describing: finished.error))")
        #expect(took < 12, "ran \(took) s past --max-time 5")
        let appends = try #require(server.resumableUploads(for: "/files").first).requests.filter { $0.hasPrefix("PATCH") }
        // At most one append per back-off of at least 0.5 s (the jitter's lower half) for 5 s.
        #expect(appends.count <= 12, "\(appends.count) appends")
        try await server.shutdown()
    }
}
