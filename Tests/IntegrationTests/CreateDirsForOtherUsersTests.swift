import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `--create-dirs` for a daemon running as root: directories only where the submitter could have
/// made them, and theirs, as the files are.
@Suite("Creating directories for other users", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
struct CreateDirsForOtherUsersTests {
    private func start() async throws -> (TestDaemon, SecondUser) {
        try await SecondUser.startDaemonServingBoth()
    }

    @Test func createdDirectoriesBelongToTheSubmitter() async throws {
        let server = try await TestHTTPServer.start()
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 1601, size: 20 << 10)
        server.serve("/deep.bin", content: content)
        let mine = daemon.destination("mine")
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true)
        #expect(chown(mine, user.uid, user.gid) == 0)
        let submitted = try await user.transferctl([
            "submit", "--socket", daemon.socketPath, "-O", "-d", mine + "/a/b", "--create-dirs", "--wait", server.url("/deep.bin"),
        ])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        for path in [mine + "/a", mine + "/a/b", mine + "/a/b/deep.bin"] {
            var info = stat()
            #expect(lstat(path, &info) == 0, "\(path)")
            #expect(info.st_uid == user.uid && info.st_gid == user.gid, "\(path) is owned by \(info.st_uid):\(info.st_gid)")
        }
        #expect(try sha256Hex(ofFile: mine + "/a/b/deep.bin") == content.sha256Hex())
        try await server.shutdown()
    }

    @Test func noDirectoryIsCreatedWhereTheSubmitterMayNotWrite() async throws {
        let (daemon, user) = try await start()
        defer { daemon.cleanUp() }
        // out/ is root's, mode 0755.
        let refused = try await user.transferctl([
            "submit", "--socket", daemon.socketPath, "--create-dirs", "http://127.0.0.1:9/x", daemon.destination("new/x.bin"),
        ])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("may not write to \(daemon.directory)/out"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: daemon.destination("new")))
    }
}
