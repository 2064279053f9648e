import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Full disks", .enabled(if: Tmpfs.available, "skipped: mounting a tmpfs needs root (CI runs the suite as root)"))
struct FullDiskTests {
    @Test func aSubmitWhoseSizeCannotFitIsRefusedWithTheNumbers() async throws {
        let daemon = try TestDaemon(configuration: ["disk_reserve_bytes": 1 << 20])
        let disk = try Tmpfs(at: daemon.directory + "/small", megabytes: 8)
        defer {
            disk.unmount()
            daemon.cleanUp()
        }
        try await daemon.start()
        do {
            _ = try daemon.submit(.init(url: "http://127.0.0.1:9/x", destination: disk.path + "/x", size: 16 << 20))
            Issue.record("a 16 MiB download into an 8 MiB filesystem was accepted")
        } catch ControlClientError.rpc(let error) {
            #expect(error.code == .insufficientSpace)
            #expect(error.message.contains(disk.path) && error.message.contains("disk_reserve_bytes"), "\(error.message)")
        }
        #expect(try daemon.jobs().isEmpty)
    }

    @Test func aFileAnnouncedTooBigWaitsForSpaceThenFailsAndTheDaemonKeepsServing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["disk_reserve_bytes": 0, "retry_initial_delay_seconds": 0])
        let disk = try Tmpfs(at: daemon.directory + "/small", megabytes: 8)
        defer {
            disk.unmount()
            daemon.cleanUp()
        }
        let big = TestContent(seed: 701, size: 12 << 20)
        let small = TestContent(seed: 702, size: 1 << 20)
        server.serve("/big", content: big)
        server.serve("/small", content: small)
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/big"), destination: disk.path + "/big", retry: .init(maxAttempts: 3)))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .diskFull, "\(String(describing: finished.error))")
        #expect(finished.attempts == 3, "waited for space between attempts")
        // Checked when the size was announced, before writing: each attempt asked for one segment only.
        #expect(server.requests(for: "/big").allSatisfy { $0.header("Range") == "bytes=0-\((4 << 20) - 1)" })
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path).isEmpty)
        let other = try daemon.submit(server.url("/small"), to: daemon.destination("small"))
        #expect(try await daemon.waitForTerminal(other.id).state == .completed)
        try await server.shutdown()
    }

    @Test func runningOutOfSpaceMidDownloadWaitsAndCompletesOnceSpaceIsBack() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["disk_reserve_bytes": 0, "retry_initial_delay_seconds": 1, "retry_max_delay_seconds": 2])
        let disk = try Tmpfs(at: daemon.directory + "/small", megabytes: 16)
        defer {
            disk.unmount()
            daemon.cleanUp()
        }
        // The server holds the body after 2 MiB until the disk is full, however busy the machine.
        let content = TestContent(seed: 703, size: 12 << 20)
        let gate = ServerGate()
        server.serve("/file", content: content, behaviour: .holdAfter(bytes: 2 << 20, until: gate))
        server.serve("/other", content: TestContent(seed: 704, size: 1 << 20))
        try await daemon.start()
        let job = try daemon.submit(.init(url: server.url("/file"), destination: disk.path + "/file", sha256: content.sha256Hex()))
        try await waitUntil("a MiB to arrive") { try daemon.job(job.id).bytesReceived >= 1 << 20 }
        let filler = disk.fill()
        gate.open()
        var waiting: Job?
        try await waitUntil("the job to wait for space") {
            let current = try daemon.job(job.id)
            if current.state == .waiting { waiting = current }
            if current.state.isTerminal { throw DeadlineExceeded(description: "the job ended \(current.state) before the disk was full") }
            return waiting != nil
        }
        #expect(waiting?.error?.code == .diskFull, "\(String(describing: waiting?.error))")
        #expect(waiting?.error?.message.contains(disk.path) == true)
        // The daemon stays up and serves other jobs meanwhile.
        let other = try daemon.submit(server.url("/other"), to: daemon.destination("other"))
        #expect(try await daemon.waitForTerminal(other.id).state == .completed)
        try FileManager.default.removeItem(atPath: filler)
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(finished.sha256 == content.sha256Hex())
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["file"])
        try await server.shutdown()
    }
}
