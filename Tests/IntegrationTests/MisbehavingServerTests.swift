import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// One test per misbehaviour of the test server: each asserts how the job ends (resumed, restarted,
/// retried or failed), the file's digest, and what is or is not at the destination.
@Suite("Misbehaving servers")
struct MisbehavingServerTests {
    /// Retries at once, so the tests do not wait for back-off.
    static var quickRetries: [String: Any] { ["retry_initial_delay_seconds": 0] }

    @Test func aDroppedConnectionResumesFromWhereItStopped() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 301, size: 3 << 20)
        server.serve("/drop", content: content, behaviour: .dropAfter(bytes: 1 << 20))
        try await daemon.start()
        let job = try daemon.submit(server.url("/drop"), to: daemon.destination("drop"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2, "one retry")
        #expect(finished.sha256 == content.sha256Hex())
        #expect(try sha256Hex(ofFile: daemon.destination("drop")) == content.sha256Hex())
        let requests = server.requests(for: "/drop")
        #expect(requests.count == 2)
        #expect(requests.last?.header("Range")?.hasPrefix("bytes=\(1 << 20)-") == true, "resumed at the drop: \(requests)")
        #expect(requests.last?.header("If-Range") != nil)
        #expect(server.bytesSent(for: "/drop") == content.size, "no byte fetched twice")
        #expect(try daemon.outputFiles() == ["drop"])
        try await server.shutdown()
    }

    @Test func aServerIgnoringRangeOnResumeIsRestartedFromZeroNeverAppended() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 302, size: 2 << 20)
        server.serve("/norange", content: content, behaviour: .all(.ignoreRange, .dropAfter(bytes: 700_000)))
        try await daemon.start()
        let job = try daemon.submit(server.url("/norange"), to: daemon.destination("norange"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2)
        #expect(try sha256Hex(ofFile: daemon.destination("norange")) == content.sha256Hex())
        #expect(server.bytesSent(for: "/norange") == 700_000 + content.size, "the second answer was taken whole")
        try await server.shutdown()
    }

    @Test func a206AtTheWrongOffsetIsNotTrustedAndTheFileIsFetchedWhole() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 303, size: 6 << 20)
        server.serve("/shifted", content: content, behaviour: .wrongRangeOffset(by: 4096))
        try await daemon.start()
        let job = try daemon.submit(server.url("/shifted"), to: daemon.destination("shifted"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("shifted")) == content.sha256Hex())
        let requests = server.requests(for: "/shifted")
        #expect(requests.first?.header("Range") != nil)
        #expect(requests.last?.header("Range") == nil, "the last request asks for the whole file: \(requests)")
        try await server.shutdown()
    }

    @Test func aFileThatChangesMidDownloadIsFetchedAgainAsTheNewVersionNeverMixed() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        // The first segment comes from the original; from the second request on, the file has changed.
        let content = TestContent(seed: 304, size: 10 << 20)
        server.serve("/changing", content: content, behaviour: .changeETagAfter(requests: 1))
        try await daemon.start()
        let job = try daemon.submit(server.url("/changing"), to: daemon.destination("changing"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("changing")) == content.replacement.sha256Hex())
        #expect(finished.sha256 == content.replacement.sha256Hex())
        let second = server.requests(for: "/changing").dropFirst().first
        #expect(second?.header("If-Range") == "\"\(content.seed)-\(content.size)\"", "the resume named the version it had")
        try await server.shutdown()
    }

    @Test func withOnlyAWeakETagADroppedDownloadStartsOverFromZero() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 305, size: 3 << 20)
        server.serve("/weak", content: content, behaviour: .all(.weakETagOnly, .dropAfter(bytes: 1 << 20)))
        try await daemon.start()
        let job = try daemon.submit(server.url("/weak"), to: daemon.destination("weak"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("weak")) == content.sha256Hex())
        let last = server.requests(for: "/weak").last
        #expect(last?.header("If-Range") == nil, "a weak ETag is never used to resume")
        #expect(last?.header("Range") == nil || last?.header("Range")?.hasPrefix("bytes=0-") == true)
        try await server.shutdown()
    }

    @Test func a416ToAPlainRangeRequestFallsBackToAWholeRequest() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 306, size: 1 << 20)
        server.serve("/416", content: content, behaviour: .status(code: 416, times: 1))
        try await daemon.start()
        let job = try daemon.submit(server.url("/416"), to: daemon.destination("416"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("416")) == content.sha256Hex())
        #expect(server.requests(for: "/416").last?.header("Range") == nil)
        try await server.shutdown()
    }

    /// A server that labels its bytes `Content-Encoding: gzip` unasked (a .tar.gz served so): the
    /// file is the bytes as sent, as curl and wget save them, and `status` says so.
    @Test func contentCodingSentUnaskedIsSavedAsSent() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 307, size: 100_000)
        server.serve("/gz", content: content, behaviour: .gzipContentEncoding)
        try await daemon.start()
        let job = try daemon.submit(server.url("/gz"), to: daemon.destination("gz"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.contentEncoding == "gzip")
        #expect(try sha256Hex(ofFile: daemon.destination("gz")) == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func a503WithRetryAfterWaitsVisiblyThenCompletes() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 308, size: 200_000)
        server.serve("/busy", content: content, behaviour: .status(code: 503, times: 1, retryAfter: "4"))
        try await daemon.start()
        // transferctl --wait, in its own process, reports each state change on stderr: the wait is
        // seen even when this test's own threads are busy.
        let result = try await runTransferctl(["submit", "--socket", daemon.socketPath, "--id", "busy", server.url("/busy"), daemon.destination("busy"), "--wait"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stderr.split(separator: "\n").map(String.init)
        let waiting = try #require(lines.first { $0.hasPrefix("job busy: waiting") }, "\(lines)")
        #expect(waiting.contains("attempt 1 failed: the server answered 503"), "\(waiting)")
        // Retry-After: 4 is honoured, not the 1 s back-off.
        #expect(["next attempt in 4s", "next attempt in 3s"].contains { waiting.hasSuffix($0 + ")") }, "\(waiting)")
        let finished = try daemon.job("busy")
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2)
        #expect(finished.error == nil)
        #expect(try sha256Hex(ofFile: daemon.destination("busy")) == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func a429IsRetriedAndA404IsNot() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 309, size: 50_000)
        server.serve("/limited", content: content, behaviour: .status(code: 429, times: 1))
        server.serve("/gone", content: content, behaviour: .status(code: 404, times: 100))
        try await daemon.start()
        let limited = try daemon.submit(server.url("/limited"), to: daemon.destination("limited"))
        let gone = try daemon.submit(server.url("/gone"), to: daemon.destination("gone"))
        let finishedLimited = try await daemon.waitForTerminal(limited.id)
        #expect(finishedLimited.state == .completed)
        #expect(finishedLimited.attempts == 2)
        let finishedGone = try await daemon.waitForTerminal(gone.id)
        #expect(finishedGone.state == .failed)
        #expect(finishedGone.attempts == 1)
        #expect(finishedGone.error?.httpStatus == 404)
        #expect(server.requests(for: "/gone").count == 1)
        #expect(try daemon.outputFiles() == ["limited"])
        try await server.shutdown()
    }

    @Test func anOverloadedServerIsGivenUpOnAfterMaxAttempts() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        server.serve("/down", content: TestContent(seed: 310, size: 1000), behaviour: .status(code: 502, times: 1000))
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/down"), destination: daemon.destination("down"), retry: .init(maxAttempts: 3)))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.attempts == 3)
        #expect(finished.error?.httpStatus == 502)
        #expect(finished.error?.message.contains("gave up after 3 failed attempts") == true, "\(String(describing: finished.error))")
        #expect(server.requests(for: "/down").count == 3)
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test func aTrickleBelowTheLowSpeedLimitIsRetriedThenFails() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        server.serve("/trickle", content: TestContent(seed: 311, size: 10_000), behaviour: .trickle(bytesPerSecond: 1))
        try await daemon.start()
        let job = try daemon.submit(
            .init(
                url: server.url("/trickle"), destination: daemon.destination("trickle"),
                retry: .init(maxAttempts: 2, lowSpeedBytesPerSecond: 100, lowSpeedSeconds: 1)))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .tooSlow, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2)
        // Only the partial file is left, for a retry; removing the job removes it.
        #expect(try daemon.outputFiles().allSatisfy { $0.hasSuffix(".part") })
        _ = try daemon.client().call(Remove.self, .init(id: job.id))
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test func aRedirectLoopFailsAfterTheLimit() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries.merging(["max_redirects": 5]) { $1 })
        defer { daemon.cleanUp() }
        server.serve("/loop", content: TestContent(seed: 312, size: 1000), behaviour: .redirectLoop())
        try await daemon.start()
        let job = try daemon.submit(server.url("/loop"), to: daemon.destination("loop"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .redirect, "\(String(describing: finished.error))")
        #expect(finished.attempts == 1, "not retried")
        #expect(server.requests(for: "/loop").count == 6, "the request and 5 redirects")
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test func aRedirectIsFollowedAndTheFinalURLRecorded() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 313, size: 5 << 20)
        server.serve("/moved", content: content, behaviour: .redirect(to: server.url("/here"), status: 301))
        server.serve("/here", content: content)
        try await daemon.start()
        let job = try daemon.submit(server.url("/moved"), to: daemon.destination("moved"), headers: ["Authorization": "Bearer s3cret"])
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.finalUrl == server.url("/here"))
        #expect(try sha256Hex(ofFile: daemon.destination("moved")) == content.sha256Hex())
        // Same host and port: the credentials go along.
        #expect(server.requests(for: "/here").first?.header("Authorization") == "Bearer s3cret")
        try await server.shutdown()
    }

    @Test func credentialsAreNotForwardedToAnotherHost() async throws {
        let server = try await TestHTTPServer.start()
        let other = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 314, size: 10_000)
        server.serve("/away", content: content, behaviour: .redirect(to: other.url("/there")))
        other.serve("/there", content: content)
        try await daemon.start()
        let job = try daemon.submit(server.url("/away"), to: daemon.destination("away"), headers: ["Authorization": "Bearer s3cret"])
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(other.requests(for: "/there").allSatisfy { $0.header("Authorization") == nil })
        try await server.shutdown()
        try await other.shutdown()
    }

    @Test func aLyingContentLengthWithRangesCompletesFromContentRange() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 315, size: 300_000)
        server.serve("/lying", content: content, behaviour: .lyingContentLength(extra: 1000))
        try await daemon.start()
        let job = try daemon.submit(server.url("/lying"), to: daemon.destination("lying"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.bytesReceived == content.size)
        #expect(try sha256Hex(ofFile: daemon.destination("lying")) == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func aLyingContentLengthWithoutRangesFailsAndKeepsNothing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: Self.quickRetries)
        defer { daemon.cleanUp() }
        server.serve("/liar", content: TestContent(seed: 316, size: 300_000), behaviour: .all(.ignoreRange, .lyingContentLength(extra: 1000)))
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/liar"), destination: daemon.destination("liar"), retry: .init(maxAttempts: 3)))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.attempts == 3)
        #expect(finished.error?.message.contains("301000") == true, "names the promised size: \(String(describing: finished.error))")
        #expect(try daemon.outputFiles().allSatisfy { $0.hasSuffix(".part") })
        _ = try daemon.client().call(Remove.self, .init(id: job.id))
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }
}
