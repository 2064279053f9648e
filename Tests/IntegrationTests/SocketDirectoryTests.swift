import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The socket's directory must be the daemon's (or root's) and closed to others, or another user
/// could replace the socket and read what clients send (headers with credentials).
@Suite("Socket directory")
struct SocketDirectoryTests {
    @Test func aSocketDirectoryOthersMayWriteIsRefused() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        chmod(daemon.directory, 0o777)
        try await daemon.start(waitUntilAnswering: false)
        let process = try #require(daemon.process)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(daemon.log.contains("the socket directory \(daemon.directory) may be written by others (mode 777)"), "\(daemon.log)")
    }
}
