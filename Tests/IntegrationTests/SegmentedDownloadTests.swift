import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Downloads over several connections (`segments`): disjoint ranges of one file fetched at once,
/// each kept across a kill -9, and every answer that does not fit the file handled.
@Suite("Downloads over several connections")
struct SegmentedDownloadTests {
    static let mib: Int64 = 1 << 20

    func params(_ server: TestHTTPServer, _ path: String, _ daemon: TestDaemon, _ content: TestContent, segments: Int) -> Submit.Params {
        var params = Submit.Params(url: server.url(path), destination: daemon.destination(String(path.dropFirst())), sha256: content.sha256Hex())
        params.segments = segments
        return params
    }

    /// The start of each ranged GET the server was asked.
    func rangeStarts(_ server: TestHTTPServer, _ path: String) -> [Int64] {
        server.requests(for: path).compactMap { request in
            guard request.method == "GET", let range = request.header("Range"), range.hasPrefix("bytes=") else { return nil }
            return Int64(range.dropFirst(6).prefix { $0 != "-" })
        }
    }

    @Test func fourConnectionsFetchDisjointRangesAndEveryByteOnce() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1401, size: 24 * Self.mib + 12_345)
        // A cap on each answer, as a CDN puts on each connection.
        server.serve("/seg", content: content, behaviour: .trickle(bytesPerSecond: 6 << 20))
        try await daemon.start()
        let job = try daemon.submit(params(server, "/seg", daemon, content, segments: 4))
        #expect(job.segments == 4)
        let finished = try await daemon.waitForTerminal(job.id, seconds: 120)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("seg")) == content.sha256Hex())
        let starts = rangeStarts(server, "/seg")
        print("segments 4: \(starts.count) ranged requests, starting at \(starts.sorted())")
        // Besides the attempt's own segments from 0, helpers asked from points far into the file.
        #expect(starts.filter { $0 >= 6 * Self.mib }.count >= 3, "\(starts)")
        // Each byte is asked for once: a request that overlaps an earlier one only continues it
        // (the same end, from further on), after a request cancelled to let a backlog drain. Only
        // then may the server have sent some bytes twice: those on their way when it was cancelled.
        let continuations = continuedRequests(server, "/seg", size: content.size)
        #expect(continuations != nil, "two requests asked for the same bytes: \(rangesAsked(server, "/seg"))")
        if continuations == 0 {
            #expect(server.bytesSent(for: "/seg") == content.size, "no byte was fetched twice")
        }
        #expect(try daemon.outputFiles() == ["seg"])
        let shown = try await runTransferctl(["--socket", daemon.socketPath, "status", job.id])
        #expect(shown.stdout.contains("segments") && shown.stdout.contains("4 connections"), "\(shown.stdout)")
        try await server.shutdown()
    }

    /// How many ranged GETs to `path` continue an earlier one (a later start, the same end: the
    /// rest of a request cancelled while the backlog drained); nil when two requests overlap in
    /// any other way, that is when a byte was asked for twice.
    func continuedRequests(_ server: TestHTTPServer, _ path: String, size: Int64) -> Int? {
        var asked: [ClosedRange<Int64>] = []
        var continuations = 0
        for request in server.requests(for: path) where request.method == "GET" {
            guard let range = request.header("Range"), range.hasPrefix("bytes=") else { continue }
            let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard let start = bounds.first.flatMap({ Int64($0) }) else { continue }
            let end = bounds.count > 1 ? Int64(bounds[1]) ?? size - 1 : size - 1
            let this = start...max(start, end)
            for earlier in asked where earlier.overlaps(this) {
                guard earlier.upperBound == this.upperBound, this.lowerBound > earlier.lowerBound else { return nil }
                continuations += 1
            }
            asked.append(this)
        }
        return continuations
    }

    /// The Range of every request to `path`, in order, to show where bytes were fetched twice.
    func rangesAsked(_ server: TestHTTPServer, _ path: String) -> String {
        server.requests(for: path).map { $0.header("Range") ?? "-" }.joined(separator: " ")
    }

    /// The largest value of `name=N` on the daemon's log lines that contain `marker`.
    func largestLogged(_ name: String, on marker: String, in log: String) -> Int64? {
        log.split(separator: "\n").filter { $0.contains(marker) }.compactMap { line -> Int64? in
            guard let range = line.range(of: " \(name)=") else { return nil }
            return Int64(line[range.upperBound...].prefix { $0.isNumber })
        }.max()
    }

    /// The offset and the bytes kept past it with which the attempt after a restart began, from
    /// the daemon's log: what was durable.
    func resumedWith(_ daemon: TestDaemon, attempt: Int) -> (offset: Int64, kept: Int64)? {
        let lines = daemon.log.split(separator: "\n").filter { $0.contains("attempt=\(attempt) ") }.joined(separator: "\n")
        guard let offset = largestLogged("bytes", on: "attempt started", in: lines),
            let kept = largestLogged("kept", on: "fetching over several connections", in: lines)
        else { return nil }
        return (offset, kept)
    }

    /// The bytes past the offset that the job's last record in the journal file holds (`parts`).
    func journaledAhead(_ daemon: TestDaemon, job: String) -> Int64 {
        struct Record: Decodable {
            struct Part: Decodable {
                var start: Int64
                var end: Int64
            }
            var parts: [Part]?
        }
        guard let journal = try? String(contentsOfFile: daemon.stateDirectory + "/journal.log", encoding: .utf8),
            let line = journal.split(separator: "\n").last(where: { $0.contains(" job/\(job) ") }),
            let json = line.firstIndex(of: "{"),
            let record = try? JSONDecoder().decode(Record.self, from: Data(line[json...].utf8))
        else { return 0 }
        return record.parts?.reduce(0) { $0 + $1.end - $1.start } ?? 0
    }

    @Test func killedMidwayEveryConnectionsBytesAreKept() async throws {
        let server = try await TestHTTPServer.start()
        let checkpointBytes: Int64 = 2 << 20
        let daemon = try TestDaemon(configuration: ["checkpoint_bytes": checkpointBytes, "log_level": "debug"])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1402, size: 64 * Self.mib)
        // The server stops just past 60 MiB of the file until the kill, so the kill lands mid-body
        // however slow the machine.
        server.serve("/big", content: content, behaviour: .all(.trickle(bytesPerSecond: 6 << 20), .holdAt(offset: 60 * Self.mib + 4321, until: ServerGate())))
        try await daemon.start()
        let job = try daemon.submit(params(server, "/big", daemon, content, segments: 4))
        // Killed once a checkpoint holding several MiB of the helpers' ranges is in the journal
        // file: what a kill -9 keeps. (The log line comes when the record is queued; a record
        // nobody waits for is written a moment later.)
        try await waitUntil("a checkpoint with 6 MiB past the offset in the journal", seconds: 120) {
            journaledAhead(daemon, job: job.id) >= 6 * Self.mib
        }
        daemon.kill9()
        let sentBefore = server.bytesSent(for: "/big")
        server.serve("/big", content: content, behaviour: .trickle(bytesPerSecond: 6 << 20))
        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id, seconds: 240)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("big")) == content.sha256Hex())
        let fetchedAfter = server.bytesSent(for: "/big") - sentBefore
        let resumed = try #require(resumedWith(daemon, attempt: 2), "the attempt after the restart fetched over several connections")
        #expect(resumed.kept >= 6 * Self.mib, "the helpers' ranges were kept: \(resumed.kept) bytes")
        // Only what was not durable is fetched again: no range is fetched twice after the restart
        // (a little more when the disk made a connection stop and start again).
        let missing = content.size - resumed.offset - resumed.kept
        print("segments 4, kill -9: resumed at \(resumed.offset) with \(resumed.kept) bytes kept past it; \(fetchedAfter) fetched after for \(missing) missing")
        #expect(fetchedAfter <= missing + 4 * Self.mib)
        if fetchedAfter > missing + 4 * Self.mib { print("ranges asked: \(rangesAsked(server, "/big"))") }
        #expect(try daemon.outputFiles() == ["big"])
        try await server.shutdown()
    }

    @Test func pausedAndRestartedEveryConnectionsBytesAreKept() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["log_level": "debug"])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1406, size: 64 * Self.mib)
        // The server stops just past 60 MiB of the file until the restart, so the pause lands
        // mid-body however slow the machine.
        server.serve("/paused", content: content, behaviour: .all(.trickle(bytesPerSecond: 2 << 20), .holdAt(offset: 60 * Self.mib + 4321, until: ServerGate())))
        try await daemon.start()
        var submit = params(server, "/paused", daemon, content, segments: 4)
        submit.id = "paused"
        _ = try daemon.submit(submit)
        try await waitUntil("20 MiB to arrive", seconds: 120) { try daemon.job("paused").bytesReceived >= 20 * Self.mib }
        let paused = try await runTransferctl(["--socket", daemon.socketPath, "pause", "paused"])
        #expect(paused.status == 0, "\(paused.stderr)")
        let held = try daemon.job("paused")
        #expect(held.state == .queued && held.paused == true, "\(held)")
        #expect(held.bytesReceived >= 20 * Self.mib, "the ranges past the offset count: \(held.bytesReceived)")
        let sentAtPause = server.bytesSent(for: "/paused")
        #expect(daemon.terminate() == 0)
        server.serve("/paused", content: content, behaviour: .trickle(bytesPerSecond: 2 << 20))
        try await daemon.start()
        #expect(try daemon.job("paused").bytesReceived == held.bytesReceived, "the ranges were kept by the restart")
        let resumed = try await runTransferctl(["--socket", daemon.socketPath, "resume", "paused"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let finished = try await daemon.waitForTerminal("paused", seconds: 240)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("paused")) == content.sha256Hex())
        let fetchedAfter = server.bytesSent(for: "/paused") - sentAtPause
        let missing = content.size - held.bytesReceived
        print("segments 4, paused after \(held.bytesReceived) bytes and restarted: \(fetchedAfter) fetched after the pause for \(missing) missing")
        // A pause syncs everything received: after it, only the missing bytes are fetched (a
        // little more when the disk made a connection stop and start again).
        #expect(fetchedAfter <= missing + 4 * Self.mib)
        if fetchedAfter > missing + 4 * Self.mib { print("ranges asked: \(rangesAsked(server, "/paused"))") }
        try await server.shutdown()
    }

    @Test func droppedConnectionsAreReplacedAndTheFileIsExact() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1403, size: 32 * Self.mib)
        // The first three answers longer than 1 MiB are cut after 1 MiB.
        server.serve("/drop", content: content, behaviour: .all(.trickle(bytesPerSecond: 8 << 20), .dropAfter(bytes: Self.mib, times: 3)))
        try await daemon.start()
        let job = try daemon.submit(params(server, "/drop", daemon, content, segments: 4))
        let finished = try await daemon.waitForTerminal(job.id, seconds: 120)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("drop")) == content.sha256Hex())
        // The cut answers' bytes are kept. When the attempt's own request is cut, the attempt ends
        // and is retried, and the helpers' requests are cancelled with it: what was on its way to
        // them (a socket buffer each) is fetched again.
        let sent = server.bytesSent(for: "/drop")
        print("segments 4, three answers cut: \(sent) bytes sent for \(content.size)")
        #expect(sent <= content.size + 3 * 3 * (512 << 10))
        try await server.shutdown()
    }

    @Test func aServerWithoutRangesGetsOneConnection() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1404, size: 8 * Self.mib)
        server.serve("/whole", content: content, behaviour: .ignoreRange)
        try await daemon.start()
        let job = try daemon.submit(params(server, "/whole", daemon, content, segments: 4))
        let finished = try await daemon.waitForTerminal(job.id, seconds: 120)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("whole")) == content.sha256Hex())
        #expect(server.requests(for: "/whole").count == 1)
        // status says so, and why, instead of the connections asked for.
        #expect(finished.connections == 1 && finished.connectionsReason == Job.ConnectionsReason.rangesRefused)
        let shown = try await runTransferctl(["--socket", daemon.socketPath, "status", job.id])
        #expect(shown.stdout.contains("1 connection of the 4 asked: the server does not take ranges"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("4 connections"), "\(shown.stdout)")
        try await server.shutdown()
    }

    @Test func aFileChangedWhileHelpersFetchIsFetchedAgainAsTheNewVersion() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1405, size: 16 * Self.mib)
        // The first answer is of one version; every later one (the helpers' too) of another.
        server.serve("/changing", content: content, behaviour: .all(.trickle(bytesPerSecond: 8 << 20), .changeETagAfter(requests: 1)))
        try await daemon.start()
        var submit = Submit.Params(url: server.url("/changing"), destination: daemon.destination("changing"))
        submit.segments = 4
        let job = try daemon.submit(submit)
        let finished = try await daemon.waitForTerminal(job.id, seconds: 120)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("changing")) == content.replacement.sha256Hex(), "no bytes of two versions mixed")
        try await server.shutdown()
    }

    @Test func segmentsOutOfRangeAndOnUploadsAreRefusedWithTheFix() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let refused = try await runTransferctl(
            ["--socket", daemon.socketPath, "submit", "--segments", "17", "http://127.0.0.1:1/f", daemon.destination("f")])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--segments 17: give 1 to 16 connections"), "\(refused.stderr)")
        var params = Submit.Params(url: "http://127.0.0.1:1/f", destination: daemon.destination("g"))
        params.segments = 0
        #expect {
            try daemon.submit(params)
        } throws: { error in
            "\(error)".contains("segments is 0: give 1 to 16 connections")
        }
    }
}
