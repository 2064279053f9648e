import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Submitting as curl and aria2 users do: several URLs named after themselves (-O, -d,
/// --create-dirs), aria2's input files (-i), and the JSON-RPC batches they travel in.
@Suite("Submitting many")
struct SubmitManyTests {
    @Test func severalURLsWithRemoteNamesLandInCreatedDirectories() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let contents = [TestContent(seed: 1401, size: 300_000), TestContent(seed: 1402, size: 1), TestContent(seed: 1403, size: 70_000)]
        server.serve("/files/a.bin", content: contents[0])
        server.serve("/files/b%20c.txt", content: contents[1])
        server.serve("/site/", content: contents[2])
        try await daemon.start()
        let directory = daemon.directory + "/out/new/deeper"
        let result = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", "-O", "-d", directory, "--create-dirs", "--wait",
            server.url("/files/a.bin"), "-O", server.url("/files/b%20c.txt?x=1#frag"), server.url("/site/"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ", maxSplits: 1).map(String.init) }
        #expect(lines.map { $0.last ?? "" } == [directory + "/a.bin", directory + "/b c.txt", directory + "/index.html"], "\(result.stdout)")
        for (name, content) in zip(["a.bin", "b c.txt", "index.html"], contents) {
            #expect(try sha256Hex(ofFile: directory + "/" + name) == content.sha256Hex(), "\(name)")
        }
        try await server.shutdown()
    }

    @Test func anInputFileWithOutDirHeaderAndChecksumOptions() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let first = TestContent(seed: 1411, size: 100_000)
        let second = TestContent(seed: 1412, size: 200_000)
        let third = TestContent(seed: 1413, size: 50_000)
        server.serve("/one", content: first)
        server.serve("/two.bin", content: second)
        server.serve("/three.bin", content: third)
        try await daemon.start()
        let output = daemon.directory + "/out"
        let list = """
            # aria2-style list
            \(server.url("/one"))
              out=renamed.bin

            \(server.url("/two.bin"))\t\(server.url("/mirror/two.bin"))
              dir=\(output)/other
              header=X-Token: abc
              header=X-Trace: 7
            \(server.url("/three.bin"))
            \tchecksum=sha-256=\(third.sha256Hex().uppercased())
            """
        let listPath = daemon.directory + "/list.txt"
        try list.write(toFile: listPath, atomically: true, encoding: .utf8)
        let result = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", "-i", listPath, "-d", output, "--create-dirs", "-H", "X-Token: from-the-command-line", "--wait",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("list.txt:5: only the first URL is used; mirrors"), "\(result.stderr)")
        #expect(try sha256Hex(ofFile: output + "/renamed.bin") == first.sha256Hex())
        #expect(try sha256Hex(ofFile: output + "/other/two.bin") == second.sha256Hex())
        #expect(try sha256Hex(ofFile: output + "/three.bin") == third.sha256Hex())
        #expect(server.requests(for: "/two.bin").first?.header("X-Token") == "abc", "the file's header wins over the command line's")
        #expect(server.requests(for: "/two.bin").first?.header("X-Trace") == "7")
        #expect(server.requests(for: "/one").first?.header("X-Token") == "from-the-command-line")
        #expect(server.requests(for: "/mirror/two.bin").isEmpty)
        let three = try daemon.jobs().first { $0.url.hasSuffix("/three.bin") }
        #expect(three?.expectedSha256 == third.sha256Hex())
        try await server.shutdown()
    }

    @Test func aRefusedURLIsNamedAndTheOthersAreAccepted() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/ok.bin", content: TestContent(seed: 1421, size: 1000))
        try await daemon.start()
        let result = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", "-O", "-d", daemon.directory + "/out",
            server.url("/ok.bin"), "ftp://example.com/f.bin", "--json",
        ])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("ftp://example.com/f.bin: "), "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.first?.contains("\"state\":\"queued\"") == true || lines.first?.contains("\"state\"") == true, "\(result.stdout)")
        #expect(lines.last?.contains("\"unsupported_url\"") == true, "\(result.stdout)")
        try await server.shutdown()
    }

    @Test func createDirsRefusesToFollowASymbolicLinkOnTheWay() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let target = daemon.directory + "/elsewhere"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        #expect(symlink(target, daemon.directory + "/out/link") == 0)
        let result = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", "--create-dirs", "http://127.0.0.1:9/f.bin", daemon.directory + "/out/link/new/f.bin",
        ])
        #expect(result.status == 4)
        #expect(result.stderr.contains("\(daemon.directory)/out/link is a symbolic link"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty, "nothing was created through the link")
    }

    @Test func withoutCreateDirsAMissingDirectoryIsRefused() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let result = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", "-O", "-d", daemon.directory + "/out/missing", "http://127.0.0.1:9/f.bin",
        ])
        #expect(result.status == 4)
        #expect(result.stderr.contains("does not exist"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: daemon.directory + "/out/missing"))
    }

    @Test func aBatchOverTheSocketIsAnsweredInOrder() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let client = try daemon.client()
        let destination = daemon.destination("batch.bin")
        let batch = """
            [{"jsonrpc":"2.0","id":1,"method":"submit","params":{"url":"http://127.0.0.1:9/a","destination":"\(destination)"}},
             {"jsonrpc":"2.0","id":2},
             {"jsonrpc":"2.0","method":"version"},
             {"jsonrpc":"2.0","id":"x","method":"frobnicate"},
             {"jsonrpc":"2.0","id":4,"method":"status","params":{}},
             {"jsonrpc":"2.0","id":5,"method":"submit","params":{"url":7}},
             {"jsonrpc":"2.0","id":6,"method":"submit","params":{"url":"http://127.0.0.1:9/b","destination":"\(destination)"}},
             1]
            """.replacingOccurrences(of: "\n", with: "")
        try client.sendLine(Array(batch.utf8))
        let answer = try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [[String: Any]]
        let answers = try #require(answer)
        #expect(answers.count == 7, "the notification gets no entry: \(answers)")
        #expect(answers.map { "\($0["id"] ?? "?")" } == ["1", "2", "x", "4", "5", "6", "<null>"])
        func code(_ index: Int) -> Int? { (answers[index]["error"] as? [String: Any])?["code"] as? Int }
        #expect(answers[0]["result"] != nil)
        #expect(code(1) == -32600)
        #expect(code(2) == -32601)
        #expect(((answers[3]["result"] as? [String: Any])?["jobs"] as? [Any])?.count == 1, "status sees the job submitted before it")
        #expect(code(4) == -32602)
        #expect(code(5) == 1010, "the same destination as call 1")
        #expect(code(6) == -32600)

        // An empty batch and a batch that is not JSON get one error each, not an array.
        try client.sendLine(Array("[ ]".utf8))
        let empty = try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [String: Any]
        #expect((empty?["error"] as? [String: Any])?["code"] as? Int == -32600)
        try client.sendLine(Array(#"[{"jsonrpc":"2.0","id":1,"method":"version"},"#.utf8))
        let broken = try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [String: Any]
        #expect((broken?["error"] as? [String: Any])?["code"] as? Int == -32700)
        // A batch of notifications only is answered with nothing: the next answer is the next call's.
        try client.sendLine(Array(#"[{"jsonrpc":"2.0","method":"version"}]"#.utf8))
        #expect(try client.call(Version.self, .init()).protocol == 1)
    }

    @Test func pipelinedSubmitsShareSyncsAndAreAnsweredInOrder() async throws {
        // The jobs that start wait for a server that holds them: only the submits write the journal.
        let server = try await TestHTTPServer.start()
        let gate = ServerGate()
        server.serve("/held", content: TestContent(seed: 5, size: 1 << 20), behaviour: .holdAfter(bytes: 0, until: gate))
        let daemon = try TestDaemon()
        defer {
            gate.open()
            daemon.cleanUp()
        }
        try await daemon.start()
        let client = try daemon.client()
        func syncs() throws -> Double {
            let text = try client.call(MetricsMethod.self, .init()).text
            let line = text.split(separator: "\n").first { $0.hasPrefix("transferd_journal_syncs_total ") }
            return line.flatMap { Double($0.split(separator: " ")[1]) } ?? -1
        }
        let before = try syncs()
        // 1,000 submits in one write, then a status that must see all of them, then a cancel of the first.
        var lines = (1...1000).map { index in
            #"{"jsonrpc":"2.0","id":\#(index),"method":"submit","params":{"url":"\#(server.url("/held"))?p\#(index)","destination":"\#(daemon.destination("p\(index)"))","id":"p\#(index)"}}"#
        }
        lines.append(#"{"jsonrpc":"2.0","id":"list","method":"status","params":{"limit":5000}}"#)
        lines.append(#"{"jsonrpc":"2.0","id":"stop","method":"cancel","params":{"id":"p1"}}"#)
        try client.sendLine(Array(lines.joined(separator: "\n").utf8))
        for index in 1...1000 {
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [String: Any])
            #expect(answer["id"] as? Int == index && answer["result"] != nil, "\(answer)")
        }
        let list = try #require(try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [String: Any])
        #expect(list["id"] as? String == "list" && (list["result"] as? [String: Any])?["total"] as? Int == 1000, "\(list)")
        let stop = try #require(try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [String: Any])
        #expect(stop["id"] as? String == "stop" && (stop["result"] as? [String: Any]) != nil, "\(stop)")
        let used = try syncs() - before
        // One sync each would be 1,000 or more. How many share one depends on how fast a sync is
        // against how fast the daemon takes submits: 575 on a loaded 2-core machine whose syncs take
        // a fraction of a millisecond, so only "fewer than one each" holds everywhere.
        #expect(used > 0 && used < 1000, "1,000 pipelined submits took \(used) journal syncs")
        try await server.shutdown()
    }

    @Test func aBatchOverTheLimitIsRefusedWhole() async throws {
        let daemon = try TestDaemon(configuration: ["max_request_bytes": 4 << 20])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let client = try daemon.client()
        let calls = Array(repeating: #"{"jsonrpc":"2.0","id":1,"method":"version"}"#, count: Limits.maxBatchCalls + 1)
        try client.sendLine(Array(("[" + calls.joined(separator: ",") + "]").utf8))
        let answer = try JSONSerialization.jsonObject(with: Data(client.readLine())) as? [String: Any]
        let error = answer?["error"] as? [String: Any]
        #expect(error?["code"] as? Int == -32600)
        #expect((error?["message"] as? String)?.contains("\(Limits.maxBatchCalls)") == true)
    }
}
