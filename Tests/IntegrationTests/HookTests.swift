import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Hooks")
struct HookTests {
    /// A hook that records each run (its stdin and environment) and fails until its third run.
    private func writeHook(in directory: String) throws -> String {
        let script = directory + "/hook.sh"
        let text = """
            #!/bin/sh
            dir=\(directory)/runs
            mkdir -p "$dir"
            n=$(ls "$dir" | grep -c '\\.stdin$')
            n=$((n + 1))
            cat > "$dir/$n.stdin"
            env | grep '^TRANSFER_' | sort > "$dir/$n.env"
            [ "$n" -ge 3 ]

            """
        try text.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        return script
    }

    private func runs(in directory: String) -> [(job: Job, environment: String)] {
        let runs = directory + "/runs"
        let count = ((try? FileManager.default.contentsOfDirectory(atPath: runs)) ?? []).filter { $0.hasSuffix(".stdin") }.count
        return (0..<count).compactMap { index in
            guard let input = FileManager.default.contents(atPath: "\(runs)/\(index + 1).stdin"),
                let job = try? WireCoding.decoder().decode(Job.self, from: input),
                let environment = try? String(contentsOfFile: "\(runs)/\(index + 1).env", encoding: .utf8)
            else { return nil }
            return (job, environment)
        }
    }

    @Test func aHookThatFailsTwiceThenSucceedsRunsExactlyThreeTimesAndNotAgainAfterARestart() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let script = try writeHook(in: daemon.directory)
        try daemon.writeConfiguration([
            "hooks": ["notify": ["session": "backup", "command": [script], "retry_initial_delay_seconds": 0.1]]
        ])
        server.serve("/data", content: TestContent(seed: 9, size: 50_000))
        try await daemon.start()
        let first = try daemon.submit(.init(url: server.url("/data"), destination: daemon.destination("first"), id: "first", session: "backup")).id
        _ = try daemon.submit(.init(url: server.url("/data"), destination: daemon.destination("loose"), id: "loose"))
        _ = try await daemon.waitForTerminal("loose")
        try await waitUntil("the hook to succeed") { daemon.log.contains("hook succeeded") }
        var recorded = runs(in: daemon.directory)
        #expect(recorded.count == 3)
        #expect(recorded.allSatisfy { $0.job.id == first && $0.job.state == .completed }, "the job as JSON on stdin")
        let environment = try #require(recorded.first?.environment)
        #expect(environment.contains("TRANSFER_JOB_ID=first\n"))
        #expect(environment.contains("TRANSFER_STATE=completed\n"))
        #expect(environment.contains("TRANSFER_DESTINATION=\(daemon.destination("first"))\n"))
        #expect(environment.contains("TRANSFER_SESSION=backup\n"))
        #expect(daemon.log.components(separatedBy: "hook failed").count - 1 == 2)

        // After a restart the finished hook does not run again; a new job's does, once.
        #expect(daemon.terminate() == 0)
        try await daemon.start()
        let second = try daemon.submit(.init(url: server.url("/missing"), destination: daemon.destination("second"), session: "backup")).id
        try await waitUntil("the second hook to succeed") { daemon.log.components(separatedBy: "hook succeeded").count - 1 == 2 }
        recorded = runs(in: daemon.directory)
        #expect(recorded.map(\.job.id) == [first, first, first, second])
        #expect(recorded.last?.job.state == .failed, "failed jobs run the hook too")
        try await server.shutdown()
    }

    @Test func aHookDueWhenTheDaemonDiedRunsAfterTheRestart() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let marker = daemon.directory + "/ran"
        let script = daemon.directory + "/once.sh"
        // Fails until the marker exists, so it is still due when the daemon is killed.
        try "#!/bin/sh\ncat > /dev/null\n[ -e \(marker) ] && echo ok >> \(daemon.directory)/succeeded\n[ -e \(marker) ]\n".write(
            toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try daemon.writeConfiguration(["hooks": ["h": ["session": "s", "command": [script], "retry_initial_delay_seconds": 0.1]]])
        server.serve("/data", content: TestContent(seed: 10, size: 10_000))
        try await daemon.start()
        _ = try daemon.submit(.init(url: server.url("/data"), destination: daemon.destination("d"), id: "d", session: "s"))
        try await waitUntil("the hook to fail") { daemon.log.contains("hook failed") }
        daemon.kill9()
        FileManager.default.createFile(atPath: marker, contents: nil)
        try await daemon.start()
        try await waitUntil("the hook to succeed after the restart") { daemon.log.contains("hook succeeded") }
        #expect(try String(contentsOfFile: daemon.directory + "/succeeded", encoding: .utf8) == "ok\n")
        try await server.shutdown()
    }
}
