import Foundation
import Testing
import TransferProtocol

/// Mistakes in the environment and on the command line are reported, not ignored (the environment
/// check itself: Tests/TransferDaemonTests/EnvironmentCheckTests.swift).
@Suite("Strict input")
struct StrictInputTests {
    @Test func theDaemonStopsAtStartOnAMisspeltVariable() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start(environment: ["TRANSFERD_LOG_LEVLE": "debug"], waitUntilAnswering: false)
        let process = try #require(daemon.process)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(daemon.log.contains("unknown environment variable TRANSFERD_LOG_LEVLE: did you mean TRANSFERD_LOG_LEVEL?"), "\(daemon.log)")
    }

    @Test func aBadIdIsAUsageErrorAndVersionIsAFlagToo() async throws {
        let bad = try await runTransferctl(["submit", "--socket", "/nonexistent.sock", "--id", "a/b", "http://example.com/f", "/tmp/f"])
        #expect(bad.status == 2, "\(bad.stderr)")
        #expect(bad.stderr.contains("--id must be 1 to 128 characters of A-Z a-z 0-9 . _ -"), "\(bad.stderr)")
        let version = try await runTransferctl(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "transferctl \(transferdVersion) (protocol \(transferProtocolVersion))")
    }
}
