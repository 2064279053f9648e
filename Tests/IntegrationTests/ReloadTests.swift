import Foundation
import Testing
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// `transferctl reload` (what the unit's ExecReload= runs) waits for the daemon's answer and fails
/// on an invalid file, naming the key; the daemon keeps the configuration it had.
@Suite("Reload")
struct ReloadTests {
    @Test func reloadAppliesAValidFileAndFailsOnAnInvalidOneNamingTheKey() async throws {
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 2])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let socket = ["--socket", daemon.socketPath]

        try daemon.writeConfiguration(["max_concurrent_transfers": 3])
        let valid = try await runTransferctl(["reload", "--json"] + socket)
        #expect(valid.status == 0, "\(valid.stderr)")
        let result = try JSONDecoder().decode(Reload.Result.self, from: Data(valid.stdout.utf8))
        #expect(result.applied == ["max_concurrent_transfers"])
        #expect(result.config == daemon.configPath)

        try daemon.writeConfiguration(["max_concurrent_transfers": 0])
        let invalid = try await runTransferctl(["reload"] + socket)
        #expect(invalid.status == 4, "\(invalid.stderr)")
        #expect(invalid.stderr.contains("max_concurrent_transfers in \(daemon.configPath) is 0"), "\(invalid.stderr)")
        #expect(invalid.stderr.contains("previous one stays in effect"), "\(invalid.stderr)")

        // Still answering, with the last valid configuration.
        try daemon.writeConfiguration(["max_concurrent_transfers": 3])
        let unchanged = try await runTransferctl(["reload", "--json"] + socket)
        #expect(unchanged.status == 0, "\(unchanged.stderr)")
        #expect(try JSONDecoder().decode(Reload.Result.self, from: Data(unchanged.stdout.utf8)).applied.isEmpty)
    }

    @Test(.enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
    func onlyRootAndTheDaemonsUserMayReload() async throws {
        let user = try #require(SecondUser.shared)
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        chmod(daemon.directory, 0o755)
        try await daemon.start()
        user.mayConnect(to: daemon)
        let refused = try await user.transferctl(["reload", "--socket", daemon.socketPath])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("only root and the daemon's own user"), "\(refused.stderr)")
    }

    @Test(.enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
    func aUserOutsideTheSocketsGroupIsToldWhichGroupToJoin() async throws {
        let user = try #require(SecondUser.shared)
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        chmod(daemon.directory, 0o755)
        try await daemon.start()
        // The socket is root's, 0660, in root's group: the second user is not a member.
        let refused = try await user.transferctl(["status", "--socket", daemon.socketPath])
        #expect(refused.status == 3, "\(refused.stderr)")
        let group = String(cString: getgrgid(getegid()).pointee.gr_name)
        #expect(
            refused.stderr.contains("permission denied on \(daemon.socketPath): you are not in the \(group) group (ask an administrator: usermod -aG \(group) $USER, then log in again)"),
            "\(refused.stderr)")
        #expect(!refused.stderr.contains("is transferd running?"), "\(refused.stderr)")
    }
}
