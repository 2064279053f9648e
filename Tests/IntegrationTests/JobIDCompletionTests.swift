import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
@testable import transferctl

/// Shell completion of job ids: the completion scripts run `transferctl ---completion COMMAND --
/// ARGUMENT INDEX CURSOR WORDS…` on Tab, and transferctl asks the daemon for the caller's ids.
@Suite("Completion of job ids")
struct JobIDCompletionTests {
    /// What the shell runs to complete the first positional argument of `command`, with the
    /// command line `transferctl --socket SOCKET COMMAND PREFIX` (the cursor after PREFIX).
    func complete(_ command: String, socket: String, prefix: String = "") async throws -> (status: Int32, ids: [String], stderr: String) {
        let words = ["transferctl", "--socket", socket, command, prefix]
        let run = try await runTransferctl(
            ["---completion", command, "--", "positional@0", String(words.count - 1), String(prefix.count)] + words)
        return (run.status, run.stdout.split(separator: "\n").map(String.init), run.stderr)
    }

    @Test func offersTheIdsOfTheCallersJobsForEachCommand() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        // Jobs that wait for a time far ahead: they stay queued, and nothing is fetched.
        var submitted: [String] = []
        for name in ["alpha", "beta", "gamma"] {
            var params = Submit.Params(url: "http://127.0.0.1:9/\(name)", destination: daemon.destination(name), id: "cmpl-\(name)")
            params.notBefore = Date().addingTimeInterval(86_400)
            submitted.append(try daemon.submit(params).id)
        }
        let paused = try await runTransferctl(["--socket", daemon.socketPath, "pause", "cmpl-beta"])
        #expect(paused.status == 0, "\(paused.stderr)")

        let status = try await complete("status", socket: daemon.socketPath)
        #expect(status.status == 0 && status.stderr.isEmpty, "\(status.stderr)")
        #expect(Set(status.ids) == Set(submitted), "\(status.ids)")
        let narrowed = try await complete("cancel", socket: daemon.socketPath, prefix: "cmpl-g")
        #expect(narrowed.ids == ["cmpl-gamma"], "\(narrowed.ids)")
        // resume and pause share their argument; each offers the jobs it can act on.
        let resumable = try await complete("resume", socket: daemon.socketPath).ids
        #expect(resumable == ["cmpl-beta"])
        let pausable = try await complete("pause", socket: daemon.socketPath).ids
        #expect(Set(pausable) == Set(submitted))
        // Nothing has ended: nothing to retry.
        let nothingToRetry = try await complete("retry", socket: daemon.socketPath).ids
        #expect(nothingToRetry.isEmpty)
        let cancelled = try await runTransferctl(["--socket", daemon.socketPath, "cancel", "cmpl-alpha"])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        let removable = try await complete("remove", socket: daemon.socketPath).ids
        #expect(removable == ["cmpl-alpha"])
        let retriable = try await complete("retry", socket: daemon.socketPath).ids
        #expect(retriable == ["cmpl-alpha"])
        let waitable = try await complete("wait", socket: daemon.socketPath).ids
        #expect(Set(waitable) == ["cmpl-beta", "cmpl-gamma"])
    }

    @Test func offersNothingAndSaysNothingWithoutADaemon() async throws {
        let missing = "/tmp/td-no-daemon-\(UUID().uuidString.prefix(8)).sock"
        let run = try await complete("status", socket: missing)
        #expect(run.status == 0)
        #expect(run.ids.isEmpty && run.stderr.isEmpty, "\(run.ids) \(run.stderr)")
    }

    @Test func readsTheSocketFromTheCommandLineBeingCompleted() {
        #expect(JobIDCompletion.socket(in: ["transferctl", "status", "--socket", "/a.sock", ""]) == "/a.sock")
        #expect(JobIDCompletion.socket(in: ["transferctl", "--socket=/b.sock", "cancel", ""]) == "/b.sock")
        #expect(JobIDCompletion.socket(in: ["transferctl", "cancel", ""]) == nil)
        #expect(JobIDCompletion.command(in: ["transferctl", "--socket", "/a.sock", "resume", ""]) == "resume")
        #expect(JobIDCompletion.command(in: ["transferctl", "pause"]) == "pause")
    }

    /// The completion scripts transferctl generates call it back for job ids.
    @Test func theGeneratedScriptsAskTransferctlForIds() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try await runTransferctl(["--generate-completion-script", shell])
            #expect(script.stdout.contains("---completion cancel -- positional@0"), "\(shell)")
        }
    }
}
