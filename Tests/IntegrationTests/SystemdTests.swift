import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// transferd under systemd's protocols, without systemd: each test owns the notification socket
/// (`NOTIFY_SOCKET`) and reads what the real daemon sends.
@Suite("systemd")
struct SystemdTests {
    @Test(arguments: NotifySocket.Kind.allCases)
    func readyArrivesAndAConnectionRightAfterItIsAnswered(kind: NotifySocket.Kind) async throws {
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: kind, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        try await daemon.start(environment: ["NOTIFY_SOCKET": notify.address], waitUntilAnswering: false)
        let ready = try await daemon.waitFor("READY", "1", on: notify)
        // One attempt, no retry: READY=1 promises that the socket accepts.
        #expect(try daemon.client().call(Version.self, .init()).daemon == transferdVersion)
        #expect(ready.message.fields["STATUS"] == "0 running, 0 queued, 0 waiting")
        #expect(daemon.terminate() == 0)
    }

    @Test func sigintInTheForegroundStopsCleanlyLikeSigterm() async throws {
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        try await daemon.start(environment: ["NOTIFY_SOCKET": notify.address])
        daemon.send(SIGINT)
        try await daemon.waitFor("STOPPING", "1", on: notify, seconds: 10)
        let process = try #require(daemon.process)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file it bound is removed")
    }

    @Test func theWatchdogIsPingedAtHalfItsInterval() async throws {
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        try await daemon.start(environment: ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "2000000"], waitUntilAnswering: false)
        let ready = try await daemon.waitFor("READY", "1", on: notify)
        let windowEnd = ready.message.arrived + .milliseconds(3500)
        func pings() -> Int { notify.messages(with: "WATCHDOG", "1").filter { $0.arrived <= windowEnd }.count }
        try await waitUntil("3 pings, or the end of the 3.5 s window") { pings() >= 3 || ContinuousClock.now > windowEnd }
        #expect(pings() >= 3, "\(notify.messages.map(\.text))")
    }

    @Test func aWatchdogMeantForAnotherProcessIsNotPinged() async throws {
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .abstract, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        // WATCHDOG_PID names this test process, not the daemon.
        try await daemon.start(
            environment: ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(getpid())"],
            waitUntilAnswering: false)
        let ready = try await daemon.waitFor("READY", "1", on: notify)
        // A window in which a daemon that pinged would have pinged at least three times.
        try await Task.sleep(until: ready.message.arrived + .milliseconds(3500))
        #expect(notify.messages(with: "WATCHDOG", "1").isEmpty)
    }

    @Test func aDaemonWhoseJournalHangsStopsPingingUntilItRecovers() async throws {
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        let stall = daemon.directory + "/journal-stalled"
        try await daemon.start(environment: [
            "NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "2000000", "TRANSFERD_TEST_JOURNAL_STALL_FILE": stall,
        ])
        try await waitUntil("two pings") { notify.messages(with: "WATCHDOG", "1").count >= 2 }

        #expect(FileManager.default.createFile(atPath: stall, contents: nil))
        // Pings come every second while healthy: three silent seconds mean they stopped.
        try await waitUntil("the pings to stop", seconds: 30) {
            guard let last = notify.messages(with: "WATCHDOG", "1").last else { return false }
            return ContinuousClock.now - last.arrived > .seconds(3)
        }
        #expect(daemon.log.contains("not pinging the watchdog: the journal did not answer"), "\(daemon.log)")
        #expect(try daemon.jobs().isEmpty, "the core still answers; only the journal hangs")

        let before = notify.messages.count
        try FileManager.default.removeItem(atPath: stall)
        try await daemon.waitFor("WATCHDOG", "1", on: notify, after: before, seconds: 10)
        #expect(daemon.log.contains("healthy again"))
    }

    @Test func sigtermDuringTwoDownloadsStopsCleanlyAndBothCompleteAfterARestart() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        let files = [("a.bin", TestContent(seed: 61, size: 3 << 20)), ("b.bin", TestContent(seed: 62, size: 3 << 20))]
        for (name, content) in files {
            server.serve("/" + name, content: content, behaviour: .trickle(bytesPerSecond: 64 << 10))
        }
        try await daemon.start(environment: ["NOTIFY_SOCKET": notify.address])
        let ids = try files.map { try daemon.submit(server.url("/" + $0.0), to: daemon.destination($0.0)).id }
        try await waitUntil("both downloads to be under way") {
            try ids.allSatisfy { id in
                let job = try daemon.job(id)
                return job.state == .running && job.bytesReceived > 0
            }
        }

        #expect(daemon.terminate() == 0)
        let stopping = try await daemon.waitFor("STOPPING", "1", on: notify, seconds: 5)
        #expect(stopping.message.fields["EXTEND_TIMEOUT_USEC"] != nil)

        for (name, content) in files { server.serve("/" + name, content: content) }
        try await daemon.start()
        for id in ids {
            let job = try await daemon.waitForTerminal(id)
            #expect(job.state == .completed, "\(id): \(String(describing: job.error))")
        }
        for (name, content) in files {
            #expect(try sha256Hex(ofFile: daemon.destination(name)) == content.sha256Hex(), "\(name)")
            // Checkpointed at the stop: the restart continues with a range instead of starting over.
            #expect(server.requests(for: "/" + name).contains { $0.header("Range") != nil }, "\(name)")
        }
        try await server.shutdown()
    }

    @Test func sighupReloadsBetweenReloadingAndReadyAndAnInvalidFileChangesNothing() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        let notify = try NotifySocket(kind: .abstract, directory: daemon.directory)
        defer { notify.close(); daemon.cleanUp() }
        for index in 0..<3 {
            server.serve("/r\(index)", content: TestContent(seed: UInt64(70 + index), size: 8 << 20), behaviour: .trickle(bytesPerSecond: 32 << 10))
        }
        try await daemon.start(environment: ["NOTIFY_SOCKET": notify.address])
        for index in 0..<3 { _ = try daemon.submit(server.url("/r\(index)"), to: daemon.destination("r\(index)")) }
        func running() throws -> Int { try daemon.jobs().filter { $0.state == .running }.count }
        try await waitUntil("one transfer running") { try running() == 1 }

        // A higher concurrency applies at once.
        try daemon.writeConfiguration(["max_concurrent_transfers": 2])
        let signalled = monotonicMicroseconds()
        let (reloading, ready) = try await daemon.reload(notify)
        let stamp = try #require(reloading.message.fields["MONOTONIC_USEC"].flatMap(UInt64.init), "\(reloading.message.text)")
        let arrived = reloading.message.arrivedMonotonic
        #expect(signalled <= stamp && stamp <= arrived && arrived - stamp < 1_000_000, "MONOTONIC_USEC=\(stamp); the test signalled at \(signalled) and received it at \(arrived)")
        #expect(ready.message.arrived >= reloading.message.arrived)
        try await waitUntil("two transfers running") { try running() == 2 }
        #expect(daemon.log.contains("configuration reloaded"))

        // The log level applies at once too: the reload's own info line is no longer written.
        try daemon.writeConfiguration(["max_concurrent_transfers": 2, "log_level": "error"])
        try await daemon.reload(notify)
        #expect(daemon.log.components(separatedBy: "configuration reloaded").count == 2)

        // An invalid file changes nothing, not even its valid keys, and READY=1 follows all the same.
        try daemon.writeConfiguration(["max_concurrent_transfers": 3, "log_level": "loud"])
        try await daemon.reload(notify)
        #expect(try running() == 2)
        #expect(daemon.log.contains("reload failed") && daemon.log.contains("log_level"), "\(daemon.log)")
        try await server.shutdown()
    }

    @Test func aSocketPassedBySystemdIsServedAndLeftInPlace() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        let listener = try listeningUnixSocket(path: daemon.socketPath)
        defer {
            close(listener)
            notify.close()
            daemon.cleanUp()
        }
        let content = TestContent(seed: 81, size: 1 << 20)
        server.serve("/activated.bin", content: content)
        let unused = daemon.directory + "/not-bound.sock"
        let activated = try ActivatedDaemon(
            listener: listener,
            arguments: ["--socket", unused, "--state-dir", daemon.stateDirectory, "--config", daemon.configPath],
            environment: ["NOTIFY_SOCKET": notify.address], logPath: daemon.logPath)
        defer { activated.kill9() }
        try await notify.waitFor("READY", "1")

        let job = try daemon.submit(server.url("/activated.bin"), to: daemon.destination("activated.bin"))
        #expect(try await daemon.waitForTerminal(job.id).state == .completed)
        #expect(try sha256Hex(ofFile: daemon.destination("activated.bin")) == content.sha256Hex())
        #expect(!FileManager.default.fileExists(atPath: unused), "an activated daemon binds nothing itself")
        #expect(daemon.log.contains("socket_activated=true"), "\(daemon.log)")

        activated.send(SIGTERM)
        #expect(try await activated.exitStatus() == 0)
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath), "the socket unit's socket file stays")
        try await server.shutdown()
    }
}

extension TestDaemon {
    /// Waits for a notification, failing early with the daemon's log when it has exited.
    @discardableResult
    func waitFor(
        _ field: String, _ value: String, on notify: NotifySocket, after index: Int = 0, seconds: Double = 60
    ) async throws -> (message: NotifySocket.Message, index: Int) {
        try await notify.waitFor(field, value, after: index, seconds: seconds) {
            if let process, !process.isRunning {
                throw DeadlineExceeded(description: "transferd exited with \(process.terminationStatus) before \(field)=\(value): \(log)")
            }
        }
    }

    /// SIGHUP; waits for RELOADING=1 and then READY=1, and returns both.
    @discardableResult
    func reload(_ notify: NotifySocket) async throws -> (reloading: (message: NotifySocket.Message, index: Int), ready: (message: NotifySocket.Message, index: Int)) {
        let mark = notify.messages.count
        send(SIGHUP)
        let reloading = try await waitFor("RELOADING", "1", on: notify, after: mark)
        let ready = try await waitFor("READY", "1", on: notify, after: reloading.index + 1)
        return (reloading, ready)
    }
}
