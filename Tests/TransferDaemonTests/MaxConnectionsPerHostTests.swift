import Foundation
import Testing
import TransferDaemon
#if canImport(Glibc)
import Glibc
#endif

/// `max_connections_per_host`: its default, its range, and that a reload applies it.
@Suite("Daemon configuration: max_connections_per_host")
struct MaxConnectionsPerHostTests {
    private func load(_ json: String) async throws -> DaemonConfiguration {
        let path = "/tmp/td-perhost-\(UUID().uuidString.prefix(8)).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        return try await DaemonConfiguration.load(path: path, environment: [:]).0
    }

    @Test func defaultsToTwoAndIsReadFromTheFile() async throws {
        #expect(DaemonConfiguration().maxConnectionsPerHost == 2)
        #expect(try await load(#"{"max_connections_per_host": 5}"#).maxConnectionsPerHost == 5)
    }

    @Test func zeroIsRefusedNamingTheKeyAndItsRange() async throws {
        do {
            _ = try await load(#"{"max_connections_per_host": 0}"#)
            Issue.record("0 was accepted")
        } catch {
            #expect("\(error)".contains("max_connections_per_host") && "\(error)".contains("1...1024"), "\(error)")
        }
    }

    @Test func aReloadAppliesItAtOnce() {
        var new = DaemonConfiguration()
        new.maxConnectionsPerHost = 6
        let applied = DaemonConfiguration().applyingLiveKeys(from: new)
        #expect(applied.maxConnectionsPerHost == 6)
        #expect(DaemonConfiguration.changedKeys(from: DaemonConfiguration(), to: applied) == ["max_connections_per_host"])
    }
}
