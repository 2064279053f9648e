import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The upload hand-off socket against a user who holds connections open without passing a file,
/// and `transferctl upload` against a hand-off socket that does not answer.
@Suite("The upload hand-off survives its clients", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
struct UploadHandoffDefenceTests {
    /// The first line `fd` receives within `seconds`.
    static func line(_ fd: Int32, seconds: Double) -> String? {
        var bytes: [UInt8] = []
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !bytes.contains(UInt8(ascii: "\n")), ContinuousClock.now < deadline {
            guard let more = RawSocket.read(fd, seconds: 0.2) else { continue }
            guard !more.isEmpty else { break }
            bytes += more
        }
        return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self)
    }

    @Test func oneUsersIdleHandOffsDoNotDelayAnotherUsersUpload() async throws {
        let user = try #require(SecondUser.shared)
        let server = try await TestHTTPServer.start()
        server.acceptUploads("/store")
        let daemon = try TestDaemon(configuration: ["upload_handoff_timeout_seconds": 2])
        defer { daemon.cleanUp() }
        chmod(daemon.directory, 0o755)
        chmod(daemon.directory + "/out", 0o755)
        try await daemon.start()
        user.mayConnect(to: daemon)
        let handoff = daemon.socketPath + ".upload"
        try await waitUntil("the upload socket to follow the control socket's group") {
            var info = stat()
            return stat(handoff, &info) == 0 && info.st_gid == user.gid
        }

        // Root opens 80 connections and passes nothing on any of them.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<80 {
            // A full listen backlog refuses a non-blocking connect: try again while the daemon
            // accepts (a loaded machine may fall behind 80 connections made at once).
            for _ in 0..<100 {
                if let fd = RawSocket.connectUnix(handoff) {
                    held.append(fd)
                    break
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        #expect(held.count == 80)

        let file = daemon.directory + "/theirs.bin"
        let content = TestContent(seed: 2002, size: 1 << 20)
        try writeContent(content, to: file)
        chmod(file, 0o644)
        let started = ContinuousClock.now
        let run = try await user.transferctl(["upload", file, server.url("/store"), "--socket", daemon.socketPath, "--json"])
        let took = ContinuousClock.now - started
        #expect(run.status == 0, "\(run.stderr)")
        #expect(took < .seconds(10), "the other user's upload took \(took)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(run.stdout.utf8))
        #expect(try await daemon.waitForTerminal(job.id, seconds: 30).state == .completed)
        #expect(server.uploads(for: "/store").last?.sha256 == content.sha256Hex())

        // Root's connections beyond its share were told why at once; the admitted ones, that
        // nothing came in time.
        let lastHeld = try #require(held.last)
        let refused = try #require(Self.line(lastHeld, seconds: 5))
        #expect(refused.contains("max_upload_handoffs_per_user") && refused.contains("1009"), "\(refused)")
        let timedOut = try #require(Self.line(held[0], seconds: 10))
        #expect(timedOut.contains("upload_handoff_timeout_seconds"), "\(timedOut)")
        try await server.shutdown()
    }

    @Test func transferctlGivesUpOnAHandOffSocketThatDoesNotAcceptAndSaysSo() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        // In place of the daemon's upload socket: one that never accepts, its backlog full.
        let handoff = daemon.socketPath + ".upload"
        unlink(handoff)
        let stuck = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(stuck) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(handoff.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stuck, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0 && listen(stuck, 0) == 0)
        var fillers: [Int32] = []
        defer { for fd in fillers { close(fd) } }
        while fillers.count < 8, let fd = RawSocket.connectUnix(handoff) { fillers.append(fd) }

        let file = daemon.directory + "/file.bin"
        try writeContent(TestContent(seed: 2003, size: 1000), to: file)
        let started = ContinuousClock.now
        let run = try await offTheTestThreads {
            try runProcess("/usr/bin/timeout", ["40", Binaries.transferctl, "upload", file, "http://127.0.0.1:9/x", "--socket", daemon.socketPath])
        }
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("did not accept the file within 10 s") && run.stderr.contains("busy or stuck"), "\(run.stderr)")
        #expect(ContinuousClock.now - started < .seconds(20))
    }
}
