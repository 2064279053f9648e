import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A file to upload is read with the submitter's rights, never the daemon's.
@Suite("Upload sources are read with the submitter's rights", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
struct UploadAccessTests {
    @Test func anotherUserCannotUploadRootsFileByPathByGuessingASpoolNameOrWithoutReadAccess() async throws {
        let server = try await TestHTTPServer.start()
        let (daemon, user) = try await SecondUser.startDaemonServingBoth()
        defer { daemon.cleanUp() }
        server.acceptUploads("/later", behaviour: .status(code: 503, times: 100, retryAfter: "3600"))
        server.acceptUploads("/store")
        let secret = daemon.directory + "/secret.bin"
        try writeContent(TestContent(seed: 80, size: 1 << 20), to: secret)
        chmod(secret, 0o600)

        // The upload socket follows the control socket's group (given to the user after the start).
        try await waitUntil("the upload socket to follow the control socket's group") {
            var info = stat()
            return stat(daemon.socketPath + ".upload", &info) == 0 && info.st_gid == user.gid
        }
        // Root's own upload holds a spool copy while it waits.
        let roots = try await daemon.uploadJob(secret, to: server.url("/later"))
        try await waitUntil("root's upload to wait") { try daemon.job(roots.id).state == .waiting }
        let spoolName = try #require(daemon.spoolFiles().first)

        func submitAsUser(_ params: String) async throws -> String {
            let line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"submit\",\"params\":{\"kind\":\"upload\",\"url\":\"\(server.url("/store"))\",\(params)}}"
            return try await user.shell("printf '%s\\n' '\(line)' | socat - UNIX-CONNECT:\(daemon.socketPath)").stdout
        }
        let byPath = try await submitAsUser("\"source\":\"\(secret)\"")
        #expect(byPath.contains("\"code\":1014") && byPath.contains(secret) && byPath.contains("transferctl upload"), "\(byPath)")
        let byName = try await submitAsUser("\"source\":\"x\",\"spool\":\"\(spoolName)\"")
        #expect(byName.contains("\"code\":-32602") && byName.contains("names no file handed to transferd by you"), "\(byName)")

        let unreadable = try await user.transferctl(["upload", secret, server.url("/store"), "--socket", daemon.socketPath])
        #expect(unreadable.status == 2, "a file transferctl cannot read is a local error, not a refusal by transferd")
        #expect(unreadable.stderr.contains(secret) && unreadable.stderr.contains("Permission denied"), "\(unreadable.stderr)")
        #expect(server.uploads(for: "/store").isEmpty, "nothing of root's file was sent")

        // What the user may read, the user may upload; the job is the user's.
        let mine = daemon.directory + "/mine.bin"
        try writeContent(TestContent(seed: 81, size: 1 << 20), to: mine)
        chmod(mine, 0o644)
        let theirs = try await user.transferctl(["upload", mine, server.url("/store"), "--socket", daemon.socketPath, "--wait", "--json"])
        #expect(theirs.status == 0, "\(theirs.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(theirs.stdout.utf8))
        #expect(job.owner == user.uid)
        #expect(server.uploads(for: "/store").last?.sha256 == TestContent(seed: 81, size: 1 << 20).sha256Hex())
        try await server.shutdown()
    }
}
