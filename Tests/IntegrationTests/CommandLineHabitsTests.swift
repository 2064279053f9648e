import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// What a new user types first, from curl's, aria2's and pueue's habits, and the messages that
/// should lead them on: each names the cause and the fix, with one prefix and the right exit code.
@Suite("transferctl for a new user")
struct CommandLineHabitsTests {
    @Test func aMisspeltCommandNamesTheClosestOne() async throws {
        let run = try await runTransferctl(["sumbit", "https://example.com/a", "/tmp/a"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("transferctl: unknown command 'sumbit': did you mean 'submit'?"), "\(run.stderr)")
        #expect(!run.stderr.contains("unexpected argument"), "\(run.stderr)")
        let unknown = try await runTransferctl(["frobnicate"])
        #expect(unknown.status == 2 && unknown.stderr.contains("The commands are submit,"), "\(unknown.stderr)")
    }

    @Test func usageErrorsCarryTransferctlsOnePrefix() async throws {
        let run = try await runTransferctl(["submit", "--segments", "99", "https://example.com/a", "/tmp/a"])
        #expect(run.status == 2)
        #expect(run.stderr.hasPrefix("transferctl: --segments 99"), "\(run.stderr)")
        #expect(!run.stderr.contains("Error:"), "\(run.stderr)")
    }

    @Test func aFileTransferctlCannotReadIsALocalErrorNotARefusal() async throws {
        let run = try await runTransferctl(["upload", "/nonexistent/file.bin", "https://example.com/up", "--socket", "/nonexistent/sock"])
        #expect(run.status == 2, "not 4 (refused by transferd) nor 3: transferd was never asked")
        #expect(run.stderr.hasPrefix("transferctl: cannot open /nonexistent/file.bin"), "\(run.stderr)")
    }

    @Test func socketPathPrintsThePathAndWhy() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let flag = try await runTransferctl(["socket-path", "--socket", daemon.socketPath, "--verbose"])
        #expect(flag.status == 0 && flag.stdout == daemon.socketPath + "\n", "\(flag)")
        #expect(flag.stderr.contains("given with --socket"), "\(flag.stderr)")
        let environment = try await runTransferctl(["socket-path", "--json"], environment: ["TRANSFERD_SOCKET": daemon.socketPath])
        let report = try JSONSerialization.jsonObject(with: Data(environment.stdout.utf8)) as? [String: Any]
        #expect(report?["path"] as? String == daemon.socketPath && report?["source"] as? String == "environment", "\(environment.stdout)")
        #expect(report?["reachable"] as? Bool == true)

        // Nothing listens in an empty runtime directory: the user's own socket is printed all the same, exit 3.
        let runtime = daemon.directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        chmod(runtime, 0o700)
        let own = try await runTransferctl(["socket-path", "-v"], environment: ["XDG_RUNTIME_DIR": runtime, "TRANSFERD_SOCKET": ""])
        #expect(own.stdout == runtime + "/transferd/transferd.sock\n", "\(own)")
        #expect(own.stderr.contains("your own transferd's socket (in $XDG_RUNTIME_DIR)"), "\(own.stderr)")
        let expected: Int32 = FileManager.default.fileExists(atPath: DefaultPaths.systemSocket) ? own.status : 3
        #expect(own.status == expected, "\(own.stderr)")
    }

    @Test func submitTakesCurlsDashOAsTheDestination() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 5, size: 64 << 10)
        server.serve("/o.bin", content: content)
        try await daemon.start()
        let destination = daemon.destination("o.bin")
        let run = try await runTransferctl(["submit", "--socket", daemon.socketPath, server.url("/o.bin"), "-o", destination, "--wait"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try sha256Hex(ofFile: destination) == content.sha256Hex())
        let both = try await runTransferctl(["submit", "--socket", daemon.socketPath, server.url("/o.bin"), destination, "-o", destination])
        #expect(both.status == 2 && both.stderr.contains("-o names the file"), "\(both.stderr)")
        try await server.shutdown()
    }

    @Test func theQuickStartsMessagesLeadOn() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let socket = ["--socket", daemon.socketPath]
        // Nothing listens on port 9: the job waits for its next attempt.
        let submitted = try await runTransferctl(["submit"] + socket + ["http://127.0.0.1:9/big.iso", daemon.destination("big.iso"), "--id", "big-iso"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let paused = try await runTransferctl(["pause"] + socket + ["big-iso"])
        #expect(paused.status == 0, "\(paused.stderr)")
        let listed = try await runTransferctl(["status"] + socket + ["--state", "paused", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains(#""id":"big-iso""#), "--state paused lists the paused job: \(listed.stdout)")
        let failedOnly = try await runTransferctl(["status"] + socket + ["--state", "failed", "--json"])
        #expect(!failedOnly.stdout.contains("big-iso"), "\(failedOnly.stdout)")

        #expect(try await runTransferctl(["cancel"] + socket + ["big-iso"]).status == 0)
        let afterCancel = try await runTransferctl(["pause"] + socket + ["big-iso"])
        #expect(afterCancel.status == 4)
        #expect(afterCancel.stderr.contains("transferctl retry big-iso"), "\(afterCancel.stderr)")

        let missing = try await runTransferctl(["submit"] + socket + ["http://127.0.0.1:9/f", daemon.directory + "/nodir/f"])
        #expect(missing.status == 4)
        #expect(missing.stderr.contains("does not exist") && missing.stderr.contains("--create-dirs"), "\(missing.stderr)")

        // A relative deadline after a start time counts from the start.
        let night = try await runTransferctl(
            ["submit"] + socket + ["http://127.0.0.1:9/n", daemon.destination("n"), "--not-before", "+1d", "--deadline", "+8h", "--json"])
        #expect(night.status == 0, "\(night.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(night.stdout.utf8))
        let window = try #require(job.deadline).timeIntervalSince(try #require(job.notBefore))
        #expect(abs(window - 8 * 3600) < 1, "\(window)")
    }

    @Test func reloadReadsTheUsersConfigurationFileOnceItExists() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let home = daemon.directory + "/config-home"
        try await daemon.start(environment: ["XDG_CONFIG_HOME": home], withConfigFlag: false)
        let file = home + "/transferd/transferd.json"
        try FileManager.default.createDirectory(atPath: home + "/transferd", withIntermediateDirectories: true)
        try Data(#"{"max_concurrent_transfers": 3, "local_addresses": "allow"}"#.utf8).write(to: URL(fileURLWithPath: file))
        let run = try await runTransferctl(["reload", "--socket", daemon.socketPath])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains(file) && run.stderr.contains("max_concurrent_transfers") && !run.stderr.contains("no file"), "\(run.stderr)")
    }
}
