import Foundation
import Testing
import TransferTestSupport

/// Checks the test server's resumable-upload endpoints (tus 1.0 and the IETF draft -05) and their
/// misbehaviour switches, with `curl` as the client.
@Suite("ResumableUploadServer")
struct ResumableUploadServerTests {
    // MARK: tus

    @Test func tusOptionsAdvertisesTheProtocol() async throws {
        try await withResumableServer(.tus) { server, client in
            let options = try await client.run(server.url("/files"), "-X", "OPTIONS")
            #expect(options.status == 204)
            #expect(options.header("Tus-Resumable") == "1.0.0")
            #expect(options.header("Tus-Version") == "1.0.0")
            #expect(options.header("Tus-Extension") == "creation,termination")
            #expect(options.header("Tus-Max-Size") == "17179869184")
        }
    }

    @Test func tusUploadInTwoHalvesCompletesWithTheRightHash() async throws {
        try await withResumableServer(.tus) { server, client in
            let content = TestContent(seed: 11, size: 3 * mebibyte + 17)
            let half = content.size / 2
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", tus, "-H", "Upload-Length: \(content.size)")
            #expect(created.status == 201)
            #expect(created.header("Tus-Resumable") == "1.0.0")
            #expect(created.header("Upload-Offset") == "0")
            let location = try #require(created.header("Location"))
            #expect(location == server.url("/files/1"))

            let first = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: 0",
                "--data-binary", "@" + client.file(content, 0..<half))
            #expect(first.status == 204)
            #expect(first.header("Upload-Offset") == "\(half)")
            let head = try await client.run(location, "-I", "-H", tus)
            #expect(head.status == 200)
            #expect(head.header("Upload-Offset") == "\(half)")
            #expect(head.header("Upload-Length") == "\(content.size)")
            #expect(head.header("Cache-Control") == "no-store")
            #expect(server.resumableUploads(for: "/files").first?.complete == false)

            let second = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: \(half)",
                "--data-binary", "@" + client.file(content, half..<content.size))
            #expect(second.status == 204)
            #expect(second.header("Upload-Offset") == "\(content.size)")
            let record = try #require(server.resumableUploads(for: "/files").first)
            #expect(record.complete)
            #expect(record.offset == content.size)
            #expect(record.sha256 == content.sha256Hex())
            #expect(record.bodyBytesReceived == content.size)
            #expect(record.resourcePath == "/files/1")
            #expect(record.requests == ["POST", "PATCH 0-\(half - 1)", "HEAD \(half)", "PATCH \(half)-\(content.size - 1)"])
        }
    }

    @Test func tusRefusesWrongOffsetMissingVersionAndUnknownResources() async throws {
        try await withResumableServer(.tus) { server, client in
            let missing = try await client.run(server.url("/files"), "-X", "POST", "-H", "Upload-Length: 10")
            #expect(missing.status == 412)
            #expect(missing.header("Tus-Version") == "1.0.0")
            #expect(missing.header("Tus-Resumable") == "1.0.0")
            let noLength = try await client.run(server.url("/files"), "-X", "POST", "-H", tus)
            #expect(noLength.status == 400)
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", tus, "-H", "Upload-Length: 10")
            let location = try #require(created.header("Location"))
            let wrong = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: 3",
                "--data-binary", "abcdefg")
            #expect(wrong.status == 409)
            let badType = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", "Upload-Offset: 0", "--data-binary", "abc")
            #expect(badType.status == 415)
            let tooLong = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: 0",
                "--data-binary", "0123456789A")
            #expect(tooLong.status == 400)
            #expect(try await client.run(server.url("/files/9"), "-I", "-H", tus).status == 404)
            let head = try await client.run(location, "-I", "-H", tus)
            #expect(head.header("Upload-Offset") == "0")
            #expect(try await client.run(location, "-X", "DELETE", "-H", tus).status == 204)
            #expect(try await client.run(location, "-I", "-H", tus).status == 404)
            #expect(server.resumableUploads(for: "/files").first?.requests.last == "DELETE terminated")
        }
    }

    // MARK: IETF draft

    @Test func ietfOptionsAdvertisesTheDraft() async throws {
        try await withResumableServer(.ietf) { server, client in
            let options = try await client.run(server.url("/files"), "-X", "OPTIONS")
            #expect(options.status == 204)
            #expect(options.header("Upload-Draft-Interop-Version") == "6")
            #expect(options.header("Upload-Limit") == "max-size=17179869184")
        }
    }

    @Test func ietfCreationThenTwoAppendsCompletesWithTheRightHash() async throws {
        try await withResumableServer(.ietf) { server, client in
            let content = TestContent(seed: 12, size: 2 * mebibyte + 5)
            let half = content.size / 2
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", interop, "-H", "Upload-Complete: ?0",
                "-H", "Upload-Length: \(content.size)")
            #expect(created.status == 201)
            #expect(created.header("Upload-Offset") == "0")
            #expect(created.header("Upload-Complete") == "?0")
            let location = try #require(created.header("Location"))
            #expect(location == server.url("/files/1"))

            let first = try await client.run(location, "-X", "PATCH", "-H", interop, "-H", partial, "-H", "Upload-Offset: 0",
                "-H", "Upload-Complete: ?0", "--data-binary", "@" + client.file(content, 0..<half))
            #expect(first.status == 204)
            #expect(first.header("Upload-Offset") == "\(half)")
            #expect(first.header("Upload-Complete") == "?0")
            let head = try await client.run(location, "-I", "-H", interop)
            #expect(head.status == 204)
            #expect(head.header("Upload-Offset") == "\(half)")
            #expect(head.header("Upload-Complete") == "?0")
            #expect(head.header("Upload-Length") == "\(content.size)")
            #expect(head.header("Cache-Control") == "no-store")

            let mismatched = try await client.run(location, "-X", "PATCH", "-H", interop, "-H", partial, "-H", "Upload-Offset: 0",
                "-H", "Upload-Complete: ?1", "--data-binary", "xyz")
            #expect(mismatched.status == 409)
            #expect(mismatched.header("Upload-Offset") == "\(half)")

            let last = try await client.run(location, "-X", "PATCH", "-H", interop, "-H", partial, "-H", "Upload-Offset: \(half)",
                "-H", "Upload-Complete: ?1", "--data-binary", "@" + client.file(content, half..<content.size))
            #expect(last.status == 201)
            #expect(last.header("Upload-Complete") == "?1")
            #expect(String(decoding: last.body, as: UTF8.self) == "{\"sha256\":\"\(content.sha256Hex())\",\"bytes\":\(content.size)}")
            let record = try #require(server.resumableUploads(for: "/files").first)
            #expect(record.complete && record.sha256 == content.sha256Hex())
            #expect(record.bodyBytesReceived == content.size + 3)

            let after = try await client.run(location, "-X", "PATCH", "-H", interop, "-H", partial,
                "-H", "Upload-Offset: \(content.size)", "-H", "Upload-Complete: ?1", "--data-binary", "z")
            #expect(after.status == 400)
            let finished = try await client.run(location, "-I", "-H", interop)
            #expect(finished.header("Upload-Complete") == "?1")
        }
    }

    @Test func ietfCompleteCreationAndPlainUpload() async throws {
        try await withResumableServer(.ietf) { server, client in
            let content = TestContent(seed: 13, size: 300_000)
            let whole = try await client.run(server.url("/files"), "-X", "PUT", "-H", interop, "-H", "Upload-Complete: ?1",
                "--data-binary", "@" + client.file(content, 0..<content.size))
            #expect(whole.status == 201)
            #expect(whole.header("Upload-Complete") == "?1")
            #expect(whole.header("Location") == server.url("/files/1"))
            #expect(String(decoding: whole.body, as: UTF8.self).contains(content.sha256Hex()))
            let plain = try await client.run(server.url("/files"), "-X", "POST",
                "--data-binary", "@" + client.file(content, 0..<content.size))
            #expect(plain.status == 201)
            #expect(plain.header("Upload-Complete") == nil)
            #expect(String(decoding: plain.body, as: UTF8.self) == "{\"sha256\":\"\(content.sha256Hex())\",\"bytes\":\(content.size)}")
            let records = server.resumableUploads(for: "/files")
            #expect(records.count == 2)
            #expect(records.allSatisfy { $0.complete && $0.sha256 == content.sha256Hex() })
            #expect(records.last?.requests == ["POST plain 0-\(content.size - 1)"])
        }
    }

    // MARK: Misbehaviour

    @Test func droppedAppendKeepsExactlyTheBytesBeforeTheCut() async throws {
        let cut: Int64 = 400 * 1024
        try await withResumableServer(.tus, behaviour: .dropAfter(bytes: cut)) { server, client in
            let content = TestContent(seed: 14, size: mebibyte)
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", tus, "-H", "Upload-Length: \(content.size)")
            let location = try #require(created.header("Location"))
            let dropped = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: 0",
                "--data-binary", "@" + client.file(content, 0..<content.size))
            #expect(dropped.exitCode != 0)
            let head = try await client.run(location, "-I", "-H", tus)
            #expect(head.header("Upload-Offset") == "409600")
            #expect(server.resumableUploads(for: "/files").first?.bodyBytesReceived == cut)

            let rest = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: \(cut)",
                "--data-binary", "@" + client.file(content, cut..<content.size))
            #expect(rest.status == 204)
            let record = try #require(server.resumableUploads(for: "/files").first)
            #expect(record.sha256 == content.sha256Hex())
            #expect(record.bodyBytesReceived == content.size)
            #expect(record.requests.first { $0.hasSuffix("dropped") } == "PATCH 0-\(cut - 1) dropped")
        }
    }

    @Test func anAppendTakesOverFromOneStillInFlight() async throws {
        try await withResumableServer(.tus) { server, client in
            let content = TestContent(seed: 16, size: mebibyte)
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", tus, "-H", "Upload-Length: \(content.size)")
            let location = try #require(created.header("Location"))
            let whole = try client.file(content, 0..<content.size)
            // A slow append, as from a client that stalled.
            let slow = Task {
                try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: 0",
                    "--limit-rate", "64K", "--data-binary", "@" + whole)
            }
            try await waitUntil("the slow append to start", seconds: 20) {
                (server.resumableUploads(for: "/files").first?.offset ?? 0) > 0
            }
            // A newer append stops it; its offset is then final.
            let conflict = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: 0",
                "--data-binary", "x")
            #expect(conflict.status == 409)
            let heldText = try #require(conflict.header("Upload-Offset"))
            let held = try #require(Int64(heldText))
            #expect(held > 0)
            let rest = try await client.run(location, "-X", "PATCH", "-H", tus, "-H", octets, "-H", "Upload-Offset: \(held)",
                "--data-binary", "@" + client.file(content, held..<content.size))
            #expect(rest.status == 204)
            #expect(try await slow.value.exitCode != 0)
            let record = try #require(server.resumableUploads(for: "/files").first)
            #expect(record.sha256 == content.sha256Hex())
            #expect(record.requests.contains { $0.hasSuffix("superseded") })
        }
    }

    @Test func understatedOffsetMakesTheClientResendAndTheHashStillMatches() async throws {
        let understatement: Int64 = 1000
        try await withResumableServer(.ietf, behaviour: .understateOffset(by: understatement)) { server, client in
            let content = TestContent(seed: 15, size: 500_000)
            let half = content.size / 2
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", interop, "-H", "Upload-Complete: ?0",
                "--data-binary", "@" + client.file(content, 0..<half), "-H", "Content-Type: application/partial-upload")
            #expect(created.header("Upload-Offset") == "\(half)")
            let location = try #require(created.header("Location"))
            let head = try await client.run(location, "-I", "-H", interop)
            let reported = half - understatement
            #expect(head.header("Upload-Offset") == "\(reported)")
            // The bytes are really gone: appending at the old offset conflicts.
            let stale = try await client.run(location, "-X", "PATCH", "-H", interop, "-H", partial, "-H", "Upload-Offset: \(half)",
                "-H", "Upload-Complete: ?1", "--data-binary", "@" + client.file(content, half..<content.size))
            #expect(stale.status == 409)
            #expect(stale.header("Upload-Offset") == "\(reported)")
            let rest = try await client.run(location, "-X", "PATCH", "-H", interop, "-H", partial, "-H", "Upload-Offset: \(reported)",
                "-H", "Upload-Complete: ?1", "--data-binary", "@" + client.file(content, reported..<content.size))
            #expect(rest.status == 201)
            let record = try #require(server.resumableUploads(for: "/files").first)
            #expect(record.sha256 == content.sha256Hex())
            // Only the first HEAD understates.
            #expect(try await client.run(location, "-I").header("Upload-Offset") == "\(content.size)")
        }
    }

    @Test func forcedStatusComesFirstButSparesOptions() async throws {
        let behaviour = ResumableBehaviour.status(code: 503, times: 1, retryAfter: "2").combined(with: .sendInterim104)
        try await withResumableServer(.ietf, behaviour: behaviour) { server, client in
            #expect(try await client.run(server.url("/files"), "-X", "OPTIONS").status == 204)
            let refused = try await client.run(server.url("/files"), "-X", "POST", "-H", interop, "-H", "Upload-Complete: ?0")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "2")
            #expect(server.resumableUploads(for: "/files").isEmpty)
            let created = try await client.run(server.url("/files"), "-X", "POST", "-H", interop, "-H", "Upload-Complete: ?0")
            #expect(created.status == 201)
            #expect(created.allHeaders.contains("HTTP/1.1 104"))
            #expect(created.header("Location") == server.url("/files/1"))
        }
    }
}

private let mebibyte: Int64 = 1 << 20
private let tus = "Tus-Resumable: 1.0.0"
private let octets = "Content-Type: application/offset+octet-stream"
private let interop = "Upload-Draft-Interop-Version: 6"
private let partial = "Content-Type: application/partial-upload"

/// Runs `body` with a fresh server taking resumable uploads at `/files`, and a curl client with its
/// own scratch directory; both are cleaned up after.
private func withResumableServer(
    _ protocolUsed: ResumableProtocol, behaviour: ResumableBehaviour = .normal,
    _ body: (TestHTTPServer, CurlClient) async throws -> Void
) async throws {
    let server = try await TestHTTPServer.start()
    server.acceptResumableUploads("/files", protocol: protocolUsed, behaviour: behaviour)
    let client = try CurlClient()
    do {
        try await body(server, client)
    } catch {
        client.remove()
        try await server.shutdown()
        throw error
    }
    client.remove()
    try await server.shutdown()
}


/// Runs curl in a scratch directory of its own.
private struct CurlClient {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("rus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Writes `range` of `content` to a new file and returns its path (for `--data-binary @path`).
    func file(_ content: TestContent, _ range: Range<Int64>) throws -> String {
        let url = directory.appendingPathComponent(UUID().uuidString)
        try Data(content.bytes(in: range)).write(to: url)
        return url.path
    }

    /// Requests `url` with curl (extra `arguments` before the URL), keeping headers and body.
    func run(_ url: String, _ arguments: String...) async throws -> CurlResult {
        let name = UUID().uuidString
        let headerFile = directory.appendingPathComponent(name + ".headers").path
        let bodyFile = directory.appendingPathComponent(name + ".body").path
        let run = try await runCurl(
            ["-s", "--max-time", "30", "-D", headerFile, "-o", bodyFile, "-w", "%{http_code}"] + arguments + [url]
        )
        let headerText = ((try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? "")
            .replacingOccurrences(of: "\r\n", with: "\n")
        let blocks = headerText.components(separatedBy: "\n\n")
        let last = blocks.last { !$0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty } ?? ""
        let headers: [(String, String)] = last.split(separator: "\n").dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (
                String(line[..<colon]),
                String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            )
        }
        let body = FileManager.default.contents(atPath: bodyFile).map { [UInt8]($0) } ?? []
        return CurlResult(exitCode: run.exitCode, status: Int(run.stdout) ?? 0, allHeaders: headerText, headers: headers, body: body)
    }
}
