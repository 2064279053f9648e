import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A daemon running as root writes for the users who submit: only where they could write
/// themselves, and the files are theirs.
@Suite("Downloads for other users", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
struct SubmitterAccessTests {
    private func start() async throws -> (TestDaemon, SecondUser) {
        try await SecondUser.startDaemonServingBoth()
    }

    private func directory(_ daemon: TestDaemon, _ name: String, owner: UInt32, group: UInt32, mode: mode_t) throws -> String {
        let path = daemon.destination(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chown(path, owner, group) == 0 && chmod(path, mode) == 0)
        return path
    }

    @Test func aUserCannotDownloadIntoADirectoryTheyMayNotWrite() async throws {
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        let refused = try await user.transferctl(["submit", "--socket", daemon.socketPath, "http://127.0.0.1:9/x", daemon.destination("theirs.bin")])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("user \(SecondUser.name) (uid \(user.uid)) may not write to \(daemon.directory)/out"), "\(refused.stderr)")
        #expect(refused.stderr.contains("mode 0755"), "\(refused.stderr)")
        #expect(try daemon.jobs().isEmpty)
        #expect(try daemon.outputFiles().isEmpty)
    }

    @Test func aUserCannotReachThroughADirectoryTheyMayNotEnter() async throws {
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        _ = try directory(daemon, "private", owner: 0, group: 0, mode: 0o700)
        let open = try directory(daemon, "private/open", owner: 0, group: 0, mode: 0o777)
        let refused = try await user.transferctl(["submit", "--socket", daemon.socketPath, "http://127.0.0.1:9/x", open + "/file"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("may not enter \(daemon.directory)/out/private"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: open).isEmpty)
    }

    @Test func theFileLandsOwnedByTheSubmitter() async throws {
        let server = try await TestHTTPServer.start()
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 901, size: 700 << 10)
        server.serve("/mine", content: content)
        let mine = try directory(daemon, "mine", owner: user.uid, group: user.gid, mode: 0o755)
        let submitted = try await user.transferctl(["submit", "--socket", daemon.socketPath, server.url("/mine"), mine + "/file.bin", "--json"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(submitted.stdout.utf8))
        #expect(job.owner == user.uid)
        #expect(try await daemon.waitForTerminal(job.id).state == .completed)
        var info = stat()
        #expect(lstat(mine + "/file.bin", &info) == 0)
        #expect(info.st_uid == user.uid && info.st_gid == user.gid, "owned by \(info.st_uid):\(info.st_gid)")
        #expect(try sha256Hex(ofFile: mine + "/file.bin") == content.sha256Hex())
        // The user sees the job; root's own jobs list shows it too.
        let status = try await user.transferctl(["status", "--socket", daemon.socketPath, job.id, "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        try await server.shutdown()
    }

    @Test func aGroupWritableDirectoryIsOpenToItsMembersAndASetgidOneKeepsItsGroup() async throws {
        let server = try await TestHTTPServer.start()
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        server.serve("/team", content: TestContent(seed: 902, size: 10 << 10))
        // Root's directory, writable by the user's group: the file gets the user's group.
        let team = try directory(daemon, "team", owner: 0, group: user.gid, mode: 0o775)
        let submitted = try await user.transferctl(["submit", "--socket", daemon.socketPath, server.url("/team"), team + "/file.bin"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await daemon.waitForTerminal(id).state == .completed)
        var info = stat()
        #expect(lstat(team + "/file.bin", &info) == 0)
        #expect(info.st_uid == user.uid && info.st_gid == user.gid)
        // Without the group's write bit, the same directory is closed to the user.
        chmod(team, 0o755)
        let refused = try await user.transferctl(["submit", "--socket", daemon.socketPath, server.url("/team"), team + "/other.bin"])
        #expect(refused.status == 4 && refused.stderr.contains("may not write to"), "\(refused.stderr)")
        // A set-group-ID directory of another group, open to all: the file keeps the directory's group.
        let setgid = try directory(daemon, "setgid", owner: 0, group: 0, mode: 0o2777)
        let inherited = try await user.transferctl(["submit", "--socket", daemon.socketPath, server.url("/team"), setgid + "/file.bin"])
        #expect(inherited.status == 0, "\(inherited.stderr)")
        #expect(try await daemon.waitForTerminal(inherited.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).state == .completed)
        #expect(lstat(setgid + "/file.bin", &info) == 0)
        #expect(info.st_uid == user.uid && info.st_gid == 0)
        try await server.shutdown()
    }

    @Test func inAStickyDirectoryAUserCannotOverwriteAnotherUsersFile() async throws {
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        let shared = try directory(daemon, "shared", owner: 0, group: 0, mode: 0o1777)
        let rootsFile = shared + "/roots.txt"
        _ = FileManager.default.createFile(atPath: rootsFile, contents: Data("root's\n".utf8))
        let refused = try await user.transferctl(["submit", "--socket", daemon.socketPath, "http://127.0.0.1:9/x", rootsFile, "--overwrite"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("sticky"), "\(refused.stderr)")
        #expect(FileManager.default.contents(atPath: rootsFile) == Data("root's\n".utf8))
    }

    @Test func aUserLosingAccessBeforeTheTransferStartsGetsADiskError() async throws {
        let server = try await TestHTTPServer.start()
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        // Every attempt is answered 503 until the directory is taken away; the next one is refused.
        try daemon.writeConfiguration(["retry_initial_delay_seconds": 1, "retry_max_delay_seconds": 1])
        daemon.send(SIGHUP)
        try await waitUntil("the reload") { daemon.log.contains("configuration reloaded") }
        server.serve("/later", content: TestContent(seed: 903, size: 1024), behaviour: .status(code: 503, times: 15))
        let mine = try directory(daemon, "mine", owner: user.uid, group: user.gid, mode: 0o755)
        let submitted = try await user.transferctl(["submit", "--socket", daemon.socketPath, server.url("/later"), mine + "/file.bin"])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        let id = submitted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try await waitUntil("the first attempt to fail") { try daemon.job(id).state == .waiting }
        #expect(chown(mine, 0, 0) == 0)
        let finished = try await daemon.waitForTerminal(id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .disk)
        #expect(finished.error?.message.contains("may not write to \(mine)") == true, "\(String(describing: finished.error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mine).isEmpty)
        try await server.shutdown()
    }
}
