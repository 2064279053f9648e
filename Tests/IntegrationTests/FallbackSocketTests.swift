import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A user without a runtime directory falls back to `/tmp/transferd-UID/`, which anyone may
/// create first. transferctl checks it as the daemon does before it sends anything: a planted
/// listener there must never see a request, let alone its Authorization header.
@Suite("transferctl's fallback socket", .enabled(if: SecondUser.shared != nil, SecondUser.skipReason), .serialized)
struct FallbackSocketTests {
    /// A listening socket at `path`, anyone may connect; accept() does not block.
    private func listen(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(fd >= 0)
        let bound = RawSocket.withUnixAddress(path) { bind(fd, $0, $1) }
        try #require(bound == 0 && Glibc.listen(fd, 16) == 0)
        chmod(path, 0o777)
        return fd
    }

    @Test func aPlantedFallbackDirectoryIsRefusedBeforeAnythingIsSent() async throws {
        let user = try #require(SecondUser.shared)
        try #require(!FileManager.default.fileExists(atPath: "/run/user/\(user.uid)"), "the user must have no runtime directory")
        let directory = "/tmp/transferd-\(user.uid)"
        try? FileManager.default.removeItem(atPath: directory)
        // Planted by another user (nobody), open to all, with a socket listening.
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(chown(directory, 65534, 65534) == 0 && chmod(directory, 0o777) == 0)
        let listener = try listen(at: directory + "/transferd.sock")
        defer { close(listener) }

        let run = try await user.transferctl(["submit", "-H", "Authorization: Bearer planted-secret", "http://127.0.0.1:9/x", "/tmp/x.bin"])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(run.stderr.contains("refusing to use the socket \(directory)/transferd.sock"), "\(run.stderr)")
        #expect(run.stderr.contains("its directory \(directory) belongs to uid 65534"), "\(run.stderr)")
        #expect(run.stderr.contains("nothing was sent"), "\(run.stderr)")
        let accepted = accept(listener, nil, nil)
        #expect(accepted < 0 && (errno == EAGAIN || errno == EWOULDBLOCK), "transferctl connected to the planted socket")
        if accepted >= 0 { close(accepted) }

        // The user's own directory, but open to everyone: refused too, naming the mode.
        #expect(chown(directory, user.uid, user.gid) == 0 && chmod(directory, 0o777) == 0)
        let open = try await user.transferctl(["status"])
        #expect(open.status == 3, "\(open.stderr)")
        #expect(open.stderr.contains("its directory \(directory) may be written by others (mode 777)"), "\(open.stderr)")
        // Closed to others, but the socket in it is another user's.
        #expect(chmod(directory, 0o755) == 0 && chown(directory + "/transferd.sock", 65534, 65534) == 0)
        let foreign = try await user.transferctl(["status"])
        #expect(foreign.status == 3, "\(foreign.stderr)")
        #expect(foreign.stderr.contains("the socket belongs to uid 65534"), "\(foreign.stderr)")
        let none = accept(listener, nil, nil)
        #expect(none < 0, "transferctl connected to a socket it should not trust")
        if none >= 0 { close(none) }
    }
}
