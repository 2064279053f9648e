import Dispatch
import Foundation
import Synchronization
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Crashes and restarts")
struct CrashTests {
    @Test func fiftyQueuedJobsSurviveKill9AndComplete() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        // The first job holds the only slot, so the other 49 are queued when the daemon dies.
        server.serve("/blocker", content: TestContent(seed: 99, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 16 << 10))
        var contents: [String: TestContent] = [:]
        for index in 0..<49 {
            let content = TestContent(seed: UInt64(100 + index), size: Int64(20_000 + index * 1000))
            server.serve("/q\(index)", content: content)
            contents["q\(index)"] = content
        }
        try await daemon.start()
        var ids = [try daemon.submit(server.url("/blocker"), to: daemon.destination("blocker")).id]
        for index in 0..<49 {
            ids.append(try daemon.submit(server.url("/q\(index)"), to: daemon.destination("q\(index)")).id)
        }
        #expect(try daemon.jobs().filter { $0.state == .queued }.count == 49)
        daemon.kill9()

        server.serve("/blocker", content: TestContent(seed: 99, size: 1 << 20))
        contents["blocker"] = TestContent(seed: 99, size: 1 << 20)
        try daemon.writeConfiguration(["max_concurrent_transfers": 4])
        try await daemon.start()
        let jobs = try daemon.jobs()
        #expect(jobs.map(\.id) == ids, "all 50 jobs are back, in order")
        for id in ids {
            let job = try await daemon.waitForTerminal(id)
            #expect(job.state == .completed, "\(id): \(String(describing: job.error))")
        }
        for (name, content) in contents {
            #expect(try sha256Hex(ofFile: daemon.destination(name)) == content.sha256Hex(), "\(name)")
        }
        try await server.shutdown()
    }

    @Test func kill9WhileSubmitsAreBeingWrittenLosesNoAcknowledgedJob() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        server.serve("/slow", content: TestContent(seed: 5, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 4096))
        try await daemon.start()
        let acknowledged = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for writer in 0..<6 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                var index = 0
                while !stop.load(ordering: .relaxed) {
                    let id = "w\(writer)-\(index)"
                    guard let job = try? daemon.submit(server.url("/slow"), to: daemon.destination(id), id: id) else { return }
                    acknowledged.withLock { $0.append(job.id) }
                    index += 1
                }
            }
        }
        try await waitUntil("150 acknowledged submits") { acknowledged.withLock { $0.count } >= 150 }
        // Dies with submits in flight: some written but not yet answered, some half-written.
        daemon.kill9()
        stop.store(true, ordering: .relaxed)
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }

        try await daemon.start()
        let recovered = Set(try daemon.jobs().map(\.id))
        let acked = acknowledged.withLock { $0 }
        let lost = acked.filter { !recovered.contains($0) }
        #expect(lost.isEmpty, "acknowledged jobs lost after kill -9: \(lost)")
        try await server.shutdown()
    }

    @Test func kill9DuringA200MiBDownloadCompletesWithTheRightDigest() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["checkpoint_bytes": 4 << 20])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 7, size: 200 << 20)
        // The server holds each answer (a ranged segment of a few MiB) after 3 MiB until the daemon
        // has been killed: the kill lands mid-body however busy the machine.
        let gate = ServerGate()
        server.serve("/big.bin", content: content, behaviour: .holdAfter(bytes: 3 << 20, until: gate))
        try await daemon.start()
        let destination = daemon.destination("big.bin")
        let job = try daemon.submit(server.url("/big.bin"), to: destination)
        try await waitUntil("2 MiB to arrive", seconds: 120) { try daemon.job(job.id).bytesReceived > 2 << 20 }
        daemon.kill9()
        #expect(!FileManager.default.fileExists(atPath: destination), "nothing half-written at the destination")
        gate.open()

        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id, seconds: 300)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2)
        #expect(try sha256Hex(ofFile: destination) == content.sha256Hex())
        #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/out") == ["big.bin"])
        try await server.shutdown()
    }

    @Test func sigtermStopsCleanlyAndTheTransferResumes() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 8, size: 32 << 20)
        server.serve("/file.bin", content: content)
        try await daemon.start(environment: ["TRANSFERD_TEST_WRITE_DELAY_USEC": "300"])
        let job = try daemon.submit(server.url("/file.bin"), to: daemon.destination("file.bin"))
        try await waitUntil("4 MiB to arrive") { try daemon.job(job.id).bytesReceived > 4 << 20 }
        #expect(daemon.terminate() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed on a clean stop")

        try await daemon.start()
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed)
        #expect(try sha256Hex(ofFile: daemon.destination("file.bin")) == content.sha256Hex())
        // A clean stop syncs the partial file, so the restart continues where it stopped instead of
        // fetching the file again (socket buffers may hold a few MiB that were sent, never read).
        let sent = server.bytesSent(for: "/file.bin")
        let asked = server.requests(for: "/file.bin").map { "\($0.header("Range") ?? "-") \($0.header("If-Range") ?? "-")" }
        #expect(sent < content.size + (8 << 20), "sent \(sent) bytes for a \(content.size)-byte file; requests: \(asked)")
        #expect(server.requests(for: "/file.bin").contains { $0.header("If-Range") != nil }, "the restart is a conditional range request")
        try await server.shutdown()
    }
}
