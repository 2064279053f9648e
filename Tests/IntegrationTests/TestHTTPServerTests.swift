import Crypto
import Foundation
import Testing
import TransferTestSupport

/// Checks the misbehaving test server itself, with `curl` as the client.
@Suite("TestHTTPServer")
struct TestHTTPServerTests {
    // MARK: TestContent

    @Test func contentIsDeterministicAndOffsetSensitive() {
        let a = TestContent(seed: 42, size: 3 * mebibyte + 5)
        let b = TestContent(seed: 42, size: 3 * mebibyte + 5)
        #expect(a.bytes(in: 0..<4096) == b.bytes(in: 0..<4096))
        #expect(TestContent(seed: 43, size: 4096).bytes(in: 0..<4096) != a.bytes(in: 0..<4096))
        // Every MiB differs from the previous one.
        #expect(a.bytes(in: 0..<4096) != a.bytes(in: mebibyte..<(mebibyte + 4096)))
        #expect(a.bytes(in: mebibyte..<(mebibyte + 4096)) != a.bytes(in: (2 * mebibyte)..<(2 * mebibyte + 4096)))
        // A range straddling MiB boundaries equals the concatenation of its parts.
        let whole = a.bytes(in: (mebibyte - 100)..<(2 * mebibyte + 100))
        let parts =
            a.bytes(in: (mebibyte - 100)..<mebibyte) + a.bytes(in: mebibyte..<(2 * mebibyte))
            + a.bytes(in: (2 * mebibyte)..<(2 * mebibyte + 100))
        #expect(whole == parts)
        // Ranges are clamped to the content.
        #expect(a.bytes(in: (a.size - 3)..<(a.size + 10)).count == 3)
        #expect(a.matches(a.bytes(in: 777..<999), at: 777))
        #expect(!a.matches(a.bytes(in: 777..<999), at: 778))
    }

    @Test func contentDigestMatchesItsBytes() {
        let content = TestContent(seed: 7, size: 2 * mebibyte + 12_345)
        let expected = TestContent.hex(SHA256.hash(data: content.allBytes()))
        #expect(content.sha256Hex() == expected)
        #expect(content.sha256Hex() == expected)  // Cached.
        #expect(TestContent(seed: 7, size: 0).sha256Hex() == TestContent.hex(SHA256.hash(data: [UInt8]())))
        #expect(content.replacement != content)
        #expect(content.replacement.size == content.size)
    }

    // MARK: Normal behaviour

    @Test func fullGetReturnsTheContent() async throws {
        try await withServer { server in
            let content = TestContent(seed: 1, size: 3 * mebibyte + 123)
            server.serve("/file.bin", content: content)
            let result = try await curl(server.url("/file.bin"), "-H", "Accept-Encoding: identity")
            #expect(result.exitCode == 0)
            #expect(result.status == 200)
            #expect(TestContent.hex(SHA256.hash(data: result.body)) == content.sha256Hex())
            #expect(result.header("Content-Length") == "\(content.size)")
            #expect(result.header("ETag") == "\"1-\(content.size)\"")
            #expect(result.header("Accept-Ranges") == "bytes")
            #expect(result.header("Last-Modified")?.hasSuffix(" GMT") == true)
            #expect(server.bytesSent(for: "/file.bin") == content.size)
            let requests = server.requests(for: "/file.bin")
            #expect(requests.count == 1)
            #expect(requests.first?.method == "GET")
            #expect(requests.first?.header("accept-encoding") == "identity")
        }
    }

    @Test func headAndUnknownPath() async throws {
        try await withServer { server in
            let content = TestContent(seed: 2, size: 1000)
            server.serve("/a", content: content)
            let head = try await curl(server.url("/a"), "-I")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "1000")
            #expect(server.requests(for: "/a").first?.method == "HEAD")
            #expect(server.bytesSent(for: "/a") == 0)
            let missing = try await curl(server.url("/missing?x=1"))
            #expect(missing.status == 404)
            #expect(server.requests(for: "/missing").first?.uri == "/missing?x=1")
        }
    }

    @Test func rangeRequestsGetTheRightSlice() async throws {
        try await withServer { server in
            let content = TestContent(seed: 3, size: 3 * mebibyte)
            server.serve("/r", content: content)

            let middle = try await curl(server.url("/r"), "-r", "1048000-2097999")
            #expect(middle.status == 206)
            #expect(middle.header("Content-Range") == "bytes 1048000-2097999/\(content.size)")
            #expect(middle.body == content.bytes(in: 1_048_000..<2_098_000))

            let tail = try await curl(server.url("/r"), "-H", "Range: bytes=3000000-")
            #expect(tail.status == 206)
            #expect(tail.header("Content-Range") == "bytes 3000000-\(content.size - 1)/\(content.size)")
            #expect(tail.body == content.bytes(in: 3_000_000..<content.size))

            let unsatisfiable = try await curl(server.url("/r"), "-H", "Range: bytes=\(content.size)-")
            #expect(unsatisfiable.status == 416)
            #expect(unsatisfiable.header("Content-Range") == "bytes */\(content.size)")

            #expect(server.requests(for: "/r").map { $0.header("Range") } == [
                "bytes=1048000-2097999", "bytes=3000000-", "bytes=\(content.size)-",
            ])
        }
    }

    @Test func ifRangeMismatchGivesTheFullBody() async throws {
        try await withServer { server in
            let content = TestContent(seed: 4, size: 100_000)
            server.serve("/i", content: content)
            let etag = "\"4-100000\""
            let matching = try await curl(server.url("/i"), "-r", "10-19", "-H", "If-Range: \(etag)")
            #expect(matching.status == 206)
            #expect(matching.body == content.bytes(in: 10..<20))
            let stale = try await curl(server.url("/i"), "-r", "10-19", "-H", "If-Range: \"other\"")
            #expect(stale.status == 200)
            #expect(stale.body == content.allBytes())
        }
    }

    @Test func keepAliveReusesTheConnection() async throws {
        try await withServer { server in
            server.serve("/k", content: TestContent(seed: 5, size: 200_000))
            let run = try await runCurl([
                "-s", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{http_code} %{num_connects}\n",
                server.url("/k"), server.url("/k"),
            ])
            #expect(run.exitCode == 0)
            #expect(run.stdout == "200 1\n200 0\n")
        }
    }

    // MARK: Misbehaviour

    @Test func ignoreRangeAnswers200() async throws {
        try await withServer { server in
            let content = TestContent(seed: 6, size: mebibyte)
            server.serve("/ir", content: content, behaviour: .ignoreRange)
            let result = try await curl(server.url("/ir"), "-r", "100-199")
            #expect(result.status == 200)
            #expect(result.header("Accept-Ranges") == nil)
            #expect(result.header("Content-Range") == nil)
            #expect(result.body == content.allBytes())
        }
    }

    @Test func statusWithRetryAfterThenNormal() async throws {
        try await withServer { server in
            let content = TestContent(seed: 7, size: 10_000)
            server.serve("/s", content: content, behaviour: .status(code: 503, times: 2, retryAfter: "7"))
            for _ in 0..<2 {
                let busy = try await curl(server.url("/s"))
                #expect(busy.status == 503)
                #expect(busy.header("Retry-After") == "7")
                #expect(busy.body.isEmpty)
            }
            let ok = try await curl(server.url("/s"))
            #expect(ok.status == 200)
            #expect(ok.header("Retry-After") == nil)
            #expect(ok.body == content.allBytes())
        }
    }

    @Test func dropAfterClosesEarlyOnce() async throws {
        try await withServer { server in
            let content = TestContent(seed: 8, size: 2 * mebibyte)
            server.serve("/d", content: content, behaviour: .dropAfter(bytes: 300_000))
            let dropped = try await curl(server.url("/d"))
            #expect(dropped.exitCode == 18)  // CURLE_PARTIAL_FILE
            #expect(dropped.status == 200)
            #expect(dropped.body == content.bytes(in: 0..<300_000))
            #expect(server.bytesSent(for: "/d") == 300_000)
            let resumed = try await curl(server.url("/d"), "-H", "Range: bytes=300000-")
            #expect(resumed.exitCode == 0)
            #expect(resumed.status == 206)
            #expect(resumed.body == content.bytes(in: 300_000..<content.size))
            #expect(server.bytesSent(for: "/d") == content.size)
        }
    }

    @Test func holdAtAnOffsetHoldsOnlyTheResponseThatHoldsIt() async throws {
        try await withServer { server in
            let content = TestContent(seed: 9, size: mebibyte)
            let gate = ServerGate()
            server.serve("/h", content: content, behaviour: .holdAt(offset: 600_000, until: gate))
            let before = try await curl(server.url("/h"), "-r", "0-299999")
            #expect(before.exitCode == 0 && before.body == content.bytes(in: 0..<300_000))
            let after = try await curl(server.url("/h"), "-r", "700000-")
            #expect(after.exitCode == 0 && after.body == content.bytes(in: 700_000..<content.size))
            let held = try await curl(server.url("/h"), "-r", "500000-", "--max-time", "5")
            #expect(held.exitCode == 28)  // CURLE_OPERATION_TIMEDOUT
            #expect(held.body == content.bytes(in: 500_000..<600_000))
            gate.open()
            let open = try await curl(server.url("/h"), "-r", "500000-")
            #expect(open.exitCode == 0 && open.body == content.bytes(in: 500_000..<content.size))
        }
    }

    @Test func wrongRangeOffsetIsHonestInContentRange() async throws {
        try await withServer { server in
            let content = TestContent(seed: 9, size: 50_000)
            server.serve("/w", content: content, behaviour: .wrongRangeOffset(by: 10))
            let result = try await curl(server.url("/w"), "-r", "1000-1999")
            #expect(result.status == 206)
            #expect(result.header("Content-Range") == "bytes 1010-2009/50000")
            #expect(result.body == content.bytes(in: 1010..<2010))
        }
    }

    @Test func changeETagAfterServesOtherContent() async throws {
        try await withServer { server in
            let content = TestContent(seed: 10, size: 40_000)
            server.serve("/c", content: content, behaviour: .changeETagAfter(requests: 1))
            let first = try await curl(server.url("/c"))
            let second = try await curl(server.url("/c"))
            #expect(first.body == content.allBytes())
            #expect(second.body == content.replacement.allBytes())
            #expect(first.header("ETag") != nil)
            #expect(first.header("ETag") != second.header("ETag"))
            #expect(first.header("Last-Modified") != second.header("Last-Modified"))
            #expect(server.content(for: "/c") == content.replacement)
        }
    }

    @Test func weakETagOnly() async throws {
        try await withServer { server in
            let content = TestContent(seed: 11, size: 5000)
            server.serve("/weak", content: content, behaviour: .weakETagOnly)
            let plain = try await curl(server.url("/weak"))
            let etag = try #require(plain.header("ETag"))
            #expect(etag.hasPrefix("W/\""))
            #expect(plain.header("Last-Modified") == nil)
            let ranged = try await curl(server.url("/weak"), "-r", "0-9", "-H", "If-Range: \(etag)")
            #expect(ranged.status == 200)
            #expect(ranged.body.count == 5000)
        }
    }

    @Test func gzipContentEncodingHeader() async throws {
        try await withServer { server in
            let content = TestContent(seed: 12, size: 3000)
            server.serve("/gz", content: content, behaviour: .gzipContentEncoding)
            let result = try await curl(server.url("/gz"))
            #expect(result.header("Content-Encoding") == "gzip")
            #expect(result.body == content.allBytes())
        }
    }

    @Test func trickleIsSlow() async throws {
        try await withServer { server in
            let content = TestContent(seed: 13, size: 20_000)
            server.serve("/t", content: content, behaviour: .trickle(bytesPerSecond: 40_000))
            let clock = ContinuousClock()
            let start = clock.now
            let result = try await curl(server.url("/t"))
            let elapsed = clock.now - start
            #expect(result.body == content.allBytes())
            // 20 000 bytes at 40 000 B/s cannot arrive sooner (no upper bound: a loaded machine is slower).
            #expect(elapsed >= .milliseconds(400))
        }
    }

    @Test func redirectsAndRedirectLoop() async throws {
        try await withServer { server in
            let content = TestContent(seed: 14, size: 1234)
            server.serve("/target", content: content)
            server.redirect("/from", to: server.url("/target"), status: 301)
            let followed = try await curl(server.url("/from"), "-L")
            #expect(followed.status == 200)
            #expect(followed.body == content.allBytes())

            let once = try await curl(server.url("/from"))
            #expect(once.status == 301)
            #expect(once.header("Location") == server.url("/target"))

            server.serve("/loop", content: content, behaviour: .redirectLoop())
            let loop = try await curl(server.url("/loop"), "-L", "--max-redirs", "5")
            #expect(loop.exitCode == 47)  // CURLE_TOO_MANY_REDIRECTS
            #expect(server.requests(for: "/loop").count == 6)
        }
    }

    @Test func lyingContentLengthThenClose() async throws {
        try await withServer { server in
            let content = TestContent(seed: 15, size: 70_000)
            server.serve("/lie", content: content, behaviour: .lyingContentLength(extra: 1000))
            let result = try await curl(server.url("/lie"))
            #expect(result.exitCode == 18)
            #expect(result.header("Content-Length") == "71000")
            #expect(result.body == content.allBytes())
        }
    }

    @Test func shutdownClosesOpenConnections() async throws {
        try await withServer { server in
            let content = TestContent(seed: 17, size: 1_000_000)
            server.serve("/slow", content: content, behaviour: .trickle(bytesPerSecond: 10_000))
            let download = Task { try await curl(server.url("/slow")) }
            try await waitUntil("the body to start") { server.bytesSent(for: "/slow") > 0 }
            try await server.shutdown()
            let result = try await download.value
            #expect(result.exitCode == 18)
            #expect(result.body.count < 1_000_000)
            let refused = try await curl(server.url("/slow"))
            #expect(refused.exitCode == 7)  // CURLE_COULDNT_CONNECT
        }
    }

    @Test func combinedSwitches() async throws {
        try await withServer { server in
            let content = TestContent(seed: 16, size: 100_000)
            server.serve(
                "/both", content: content,
                behaviour: .all(.gzipContentEncoding, .dropAfter(bytes: 1000, times: 2))
            )
            for _ in 0..<2 {
                let dropped = try await curl(server.url("/both"))
                #expect(dropped.exitCode == 18)
                #expect(dropped.header("Content-Encoding") == "gzip")
                #expect(dropped.body == content.bytes(in: 0..<1000))
            }
            let whole = try await curl(server.url("/both"))
            #expect(whole.exitCode == 0)
            #expect(whole.body == content.allBytes())
        }
    }
}

// MARK: - Helpers

private let mebibyte: Int64 = 1 << 20

/// Runs `body` with a fresh server, shutting it down afterwards.
private func withServer(_ body: (TestHTTPServer) async throws -> Void) async throws {
    let server = try await TestHTTPServer.start()
    do {
        try await body(server)
    } catch {
        try await server.shutdown()
        throw error
    }
    try await server.shutdown()
}


/// Fetches `url` with curl (extra `arguments` before the URL), keeping headers and body.
private func curl(_ url: String, _ arguments: String...) async throws -> CurlResult {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tts-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let headerFile = directory.appendingPathComponent("headers").path
    let bodyFile = directory.appendingPathComponent("body").path
    let run = try await runCurl(
        ["-s", "--max-time", "30", "-D", headerFile, "-o", bodyFile, "-w", "%{http_code}"] + arguments + [url]
    )
    let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
    let blocks = headerText.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n\n")
    let last = blocks.last { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty } ?? ""
    let headers: [(String, String)] = last.split(separator: "\n").dropFirst().compactMap { line in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (
            String(line[..<colon]),
            String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        )
    }
    let body = FileManager.default.contents(atPath: bodyFile).map { [UInt8]($0) } ?? []
    return CurlResult(exitCode: run.exitCode, status: Int(run.stdout) ?? 0, headers: headers, body: body)
}
