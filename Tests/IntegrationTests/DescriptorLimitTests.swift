import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's open-file limit: raised at start, and running out of descriptors neither stops a
/// listener nor floods the log.
@Suite("Descriptor limits")
struct DescriptorLimitTests {
    @Test func theDaemonRaisesItsSoftOpenFileLimitToTheHardLimit() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        // As systemd starts a service: soft 1,024, a higher hard limit.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = [
            "--nofile=1024:8192", "--", Binaries.transferd, "--socket", daemon.socketPath, "--state-dir", daemon.stateDirectory,
            "--config", daemon.configPath,
        ]
        process.environment = TestDaemon.environment([:])
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try await waitUntil("transferd to answer", seconds: 60) {
            (try? ControlClient(socketPath: daemon.socketPath).call(Version.self, .init())) != nil
        }
        #expect(RawSocket.descriptorLimit(of: process.processIdentifier) == 8192)
    }

    @Test func runningOutOfDescriptorsIsLoggedOnceAndTheControlSocketRecovers() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let inUse = RawSocket.openDescriptors(of: daemon.pid)
        #expect(RawSocket.limitDescriptors(of: daemon.pid, to: inUse + 16))

        // Far more connections than the daemon has descriptors left: its accepts fail for a while.
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<60 {
            if let fd = RawSocket.connectUnix(daemon.socketPath) { held.append(fd) }
        }
        try await waitUntil("the daemon to log that it cannot accept", seconds: 20) {
            daemon.log.contains("cannot accept connections")
        }
        try await Task.sleep(for: .seconds(2))
        for fd in held { close(fd) }
        held = []

        // Once the descriptors are back, the same listener serves again.
        try await waitUntil("the control socket to answer again", seconds: 20) {
            (try? ControlClient(socketPath: daemon.socketPath).call(Version.self, .init())) != nil
        }
        let log = daemon.log
        let failures = log.components(separatedBy: "cannot accept connections").count - 1
        #expect(failures == 1, "\(log)")
        #expect(log.contains("listener=control"), "\(log)")
        // The run ends at an accept some seconds after the last failure.
        try await waitUntil("the daemon to log that it accepts again", seconds: 20, interval: .milliseconds(500)) {
            _ = try? ControlClient(socketPath: daemon.socketPath).call(Version.self, .init())
            return daemon.log.contains("accepting connections again")
        }
        #expect(daemon.process?.isRunning == true)
    }

    @Test func theUploadSocketKeepsAcceptingAfterRunningOutOfDescriptors() async throws {
        let server = try await TestHTTPServer.start()
        server.acceptUploads("/store")
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let handoff = daemon.socketPath + ".upload"
        let inUse = RawSocket.openDescriptors(of: daemon.pid)
        let limit = try #require(RawSocket.descriptorLimit(of: daemon.pid))
        #expect(RawSocket.limitDescriptorsSoftly(of: daemon.pid, to: inUse + 2))
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<40 {
            if let fd = RawSocket.connectUnix(handoff) { held.append(fd) }
        }
        try await waitUntil("the daemon to log that the upload socket cannot accept", seconds: 20) {
            daemon.log.contains("listener=\"upload hand-off\"") || daemon.log.contains("listener=upload hand-off")
        }
        for fd in held { close(fd) }
        held = []
        #expect(RawSocket.limitDescriptorsSoftly(of: daemon.pid, to: limit))

        let file = daemon.directory + "/file.bin"
        let content = TestContent(seed: 2004, size: 100_000)
        try writeContent(content, to: file)
        // The connections just closed give their hand-off slots back as their threads notice.
        var uploaded: Job?
        try await waitUntil("an upload to be taken", seconds: 20, interval: .milliseconds(200)) {
            uploaded = try? await daemon.uploadJob(file, to: server.url("/store"))
            return uploaded != nil
        }
        let job = try #require(uploaded)
        #expect(try await daemon.waitForTerminal(job.id, seconds: 30).state == .completed)
        #expect(server.uploads(for: "/store").last?.sha256 == content.sha256Hex())
        let failures = daemon.log.components(separatedBy: "cannot accept connections").count - 1
        #expect(failures == 1, "\(daemon.log)")
        try await server.shutdown()
    }
}
