import Foundation
import Testing
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// `socket_group` and `socket_mode` on the socket the daemon creates, at start and on reload.
@Suite("Socket group")
struct SocketGroupTests {
    /// Groups that exist here other than this process's own, by name and gid.
    static let otherGroups: [(name: String, gid: gid_t)] = ["nogroup", "daemon", "nobody", "users", "adm"].compactMap { name in
        guard let entry = getgrnam(name), entry.pointee.gr_gid != getegid() else { return nil }
        return (name, entry.pointee.gr_gid)
    }

    private func ownership(_ path: String) -> (gid: gid_t, mode: mode_t)? {
        var info = stat()
        return lstat(path, &info) == 0 ? (info.st_gid, info.st_mode & 0o777) : nil
    }

    @Test(.enabled(if: getuid() == 0, "giving the socket to a group the daemon's user is not in needs root"))
    func theSocketGetsTheConfiguredGroupAndModeAndAReloadChangesThem() async throws {
        let groups = Self.otherGroups
        try #require(groups.count >= 2, "needs two groups other than the test's own: \(groups)")
        let daemon = try TestDaemon(configuration: ["socket_group": groups[0].name, "socket_mode": "0640"])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let first = ownership(daemon.socketPath)
        #expect(first?.gid == groups[0].gid && first?.mode == 0o640, "\(String(describing: first))")

        // A gid works as well as a name, and reload applies both keys live.
        try daemon.writeConfiguration(["socket_group": groups[1].gid, "socket_mode": "0660"])
        daemon.send(SIGHUP)
        try await waitUntil("the socket's new group and mode") {
            let now = ownership(daemon.socketPath)
            return now?.gid == groups[1].gid && now?.mode == 0o660
        }

        // Without the key, the socket goes back to the daemon's own group.
        try daemon.writeConfiguration([:])
        daemon.send(SIGHUP)
        try await waitUntil("the socket back in the daemon's group") { ownership(daemon.socketPath)?.gid == getegid() }
        #expect(try daemon.client().call(Version.self, .init()).protocol == transferProtocolVersion)
        #expect(daemon.terminate() == 0)
    }

    @Test(.enabled(if: getuid() == 0, "needs a group other than the test's own, which needs root to give"))
    func aSocketPassedBySystemdKeepsTheUnitsGroup() async throws {
        let group = try #require(Self.otherGroups.first)
        let daemon = try TestDaemon(configuration: ["socket_group": group.name, "socket_mode": "0600"])
        let notify = try NotifySocket(kind: .path, directory: daemon.directory)
        let listener = try listeningUnixSocket(path: daemon.socketPath)
        defer {
            close(listener)
            notify.close()
            daemon.cleanUp()
        }
        let before = ownership(daemon.socketPath)
        let activated = try ActivatedDaemon(
            listener: listener,
            arguments: ["--socket", daemon.directory + "/not-bound.sock", "--state-dir", daemon.stateDirectory, "--config", daemon.configPath],
            environment: ["NOTIFY_SOCKET": notify.address], logPath: daemon.logPath)
        defer { activated.kill9() }
        try await notify.waitFor("READY", "1")
        let after = ownership(daemon.socketPath)
        #expect(after?.gid == before?.gid && after?.mode == before?.mode, "before \(String(describing: before)), after \(String(describing: after))")
        activated.send(SIGTERM)
        #expect(try await activated.exitStatus() == 0)
    }
}
