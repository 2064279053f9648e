import Foundation
import Testing

/// Defaults < file < environment < flags, observed in the settings the daemon logs when it is ready.
@Suite("Configuration layering")
struct ConfigurationLayeringTests {
    /// Starts and stops `daemon`, and returns what it logged meanwhile.
    private func logOfOneRun(_ daemon: TestDaemon, environment: [String: String] = [:], arguments: [String] = []) async throws -> String {
        let before = daemon.log.count
        try await daemon.start(environment: environment, arguments: arguments)
        #expect(daemon.terminate() == 0)
        return String(daemon.log.dropFirst(before))
    }

    @Test func theEnvironmentWinsOverTheFileAndFlagsWinOverBoth() async throws {
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1, "log_level": "info"])
        defer { daemon.cleanUp() }
        #expect(try await logOfOneRun(daemon).contains("max_concurrent_transfers=1"))

        let environment = ["TRANSFERD_MAX_CONCURRENT_TRANSFERS": "3", "TRANSFERD_LOG_LEVEL": "warning"]
        let fromEnvironment = try await logOfOneRun(daemon, environment: environment)
        #expect(!fromEnvironment.contains(" ready"), "warning from the environment hides the info line: \(fromEnvironment)")

        let fromFlags = try await logOfOneRun(
            daemon, environment: environment, arguments: ["--max-concurrent-transfers", "2", "--log-level", "debug"])
        #expect(fromFlags.contains("max_concurrent_transfers=2"), "\(fromFlags)")
        #expect(fromFlags.contains("log_level=debug"), "\(fromFlags)")

        let environmentOverFile = try await logOfOneRun(daemon, environment: ["TRANSFERD_MAX_CONCURRENT_TRANSFERS": "3"])
        #expect(environmentOverFile.contains("max_concurrent_transfers=3"), "\(environmentOverFile)")
    }

    @Test func anInvalidEnvironmentValueStopsStartUpNamingTheVariable() throws {
        let directory = "/tmp/td-layering-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.transferd)
        process.arguments = ["--socket", directory + "/s.sock", "--state-dir", directory + "/state"]
        process.environment = TestDaemon.environment(["TRANSFERD_MAX_CONCURRENT_TRANSFERS": "lots"])
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        #expect(message.contains("max_concurrent_transfers") && message.contains("TRANSFERD_MAX_CONCURRENT_TRANSFERS"), "\(message)")
    }
}
