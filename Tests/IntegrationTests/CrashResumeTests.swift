import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Resume after kill -9")
struct CrashResumeTests {
    @Test func a200MiBDownloadKilledOnceResumesFetchingOnlyWhatWasMissing() async throws {
        let server = try await TestHTTPServer.start()
        let checkpointBytes: Int64 = 8 << 20
        let daemon = try TestDaemon(configuration: ["checkpoint_bytes": checkpointBytes])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 501, size: 200 << 20)
        // The server stops just past 88 MiB of the file until the kill, so the kill lands between
        // 80 and 88 MiB however slow the machine.
        server.serve("/big", content: content, behaviour: .all(.trickle(bytesPerSecond: 40 << 20), .holdAt(offset: (88 << 20) + 4321, until: ServerGate())))
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/big"), destination: daemon.destination("big"), sha256: content.sha256Hex()))
        var received: Int64 = 0
        try await waitUntil("80 MiB to arrive", seconds: 120) {
            received = try daemon.job(job.id).bytesReceived
            return received >= 80 << 20
        }
        daemon.kill9()
        let sentBefore = server.bytesSent(for: "/big")
        server.serve("/big", content: content, behaviour: .trickle(bytesPerSecond: 40 << 20))
        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id, seconds: 240)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.sha256 == content.sha256Hex(), "the digest was rebuilt from the kept bytes")
        #expect(try sha256Hex(ofFile: daemon.destination("big")) == content.sha256Hex())
        let fetchedAfter = server.bytesSent(for: "/big") - sentBefore
        let remaining = content.size - received
        print("200 MiB resume: \(received) bytes received before kill -9, \(fetchedAfter) fetched after (remaining \(remaining), bound \(remaining + checkpointBytes))")
        #expect(fetchedAfter <= remaining + checkpointBytes)
        #expect(fetchedAfter >= remaining - checkpointBytes * 4, "it did not restart from a much later point than it had")
        #expect(try daemon.outputFiles() == ["big"])
        try await server.shutdown()
    }

    @Test func twentyDownloadsSurviveAtLeastTenRandomKills() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        var random = SplitMix64(seed: 0x5EED_C4A5)
        var contents: [String: TestContent] = [:]
        for index in 0..<20 {
            let size = Int64(5 << 20) + Int64(random.next() % UInt64(45 << 20))
            let content = TestContent(seed: 600 + random.next() % 1_000_000, size: size)
            let name = "f\(index)"
            contents[name] = content
            // Slow while the daemon is being killed, so that restarts on a loaded machine do not
            // let everything finish before ten kills; full speed once the kills are done.
            server.serve("/" + name, content: content, behaviour: .trickle(bytesPerSecond: 5 << 20))
        }
        let needed = contents.values.reduce(0) { $0 + $1.size }
        let names = contents.keys.sorted()
        func totalSent() -> Int64 { names.reduce(0) { $0 + server.bytesSent(for: "/" + $1) } }

        try await daemon.start()
        var ids: [String: String] = [:]
        for name in names {
            ids[name] = try daemon.submit(.init(url: server.url("/" + name), destination: daemon.destination(name), id: "crash-" + name)).id
        }
        var kills = 0
        var start = totalSent()
        while kills < 12 {
            // A random moment: after a random amount of progress since the daemon was last started,
            // from none (in the middle of replay and the first journal writes) to a few segments.
            let progress = Int64(random.next() % UInt64(16 << 20))
            var allDone = false
            try await waitUntil("progress before kill \(kills + 1)", seconds: 120, interval: .milliseconds(5)) {
                if totalSent() - start >= progress { return true }
                allDone = try daemon.jobs().allSatisfy { $0.state == .completed }
                return allDone
            }
            if allDone { break }
            daemon.kill9()
            kills += 1
            start = totalSent()
            try await daemon.start()
        }
        for (name, content) in contents {
            server.serve("/" + name, content: content)
        }
        for name in names {
            let job = try await daemon.waitForTerminal(try #require(ids[name]), seconds: 240)
            #expect(job.state == .completed, "\(name): \(String(describing: job.error))")
        }
        #expect(kills >= 10, "the daemon was killed \(kills) times")
        for name in names {
            #expect(try sha256Hex(ofFile: daemon.destination(name)) == contents[name]?.sha256Hex(), "\(name)")
        }
        #expect(try daemon.outputFiles() == names, "no partial files are left")
        let jobs = try daemon.jobs()
        #expect(jobs.count == 20 && Set(jobs.map(\.id)).count == 20, "no duplicate jobs")
        let downloaded = totalSent()
        print("crash loop: \(kills) kills, \(downloaded) bytes downloaded for \(needed) needed, ratio \(String(format: "%.3f", Double(downloaded) / Double(needed)))")
        try await server.shutdown()
    }
}
