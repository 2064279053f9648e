import Foundation
import Testing
import TransferProtocol
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// A replace refused in a sticky directory (`/tmp`) names the sticky bit and the file's owner as
/// the cause, not the daemon's permissions.
@Suite("Landing in a sticky directory")
struct LandingStickyTests {
    @Test(.enabled(if: geteuid() == 0, "needs root to give files to another uid"))
    func aForeignFileInAStickyDirectoryNamesTheStickyBit() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sticky = directory.file("shared")
        #expect(mkdir(sticky, 0o777) == 0)
        #expect(chmod(sticky, 0o1777) == 0)
        #expect(FileManager.default.createFile(atPath: sticky + "/report.pdf", contents: Data([1])))
        let fd = open(sticky, O_RDONLY | O_DIRECTORY)
        let handle = DirectoryHandle(fd: fd, path: sticky)
        // The daemon's own file, or a directory it owns: not the sticky bit's doing.
        #expect(Landing.stickyRefusal(in: handle, name: "report.pdf", destination: sticky + "/report.pdf") == nil)

        #expect(chown(sticky + "/report.pdf", 4_000_001, 4_000_001) == 0)
        #expect(chown(sticky, 4_000_002, 4_000_002) == 0)
        let refusal = try #require(Landing.stickyRefusal(in: handle, name: "report.pdf", destination: sticky + "/report.pdf"))
        #expect(refusal.message.contains("belongs to uid 4000001") && refusal.message.contains("sticky (mode 1777"), "\(refusal.message)")
        #expect(!refusal.message.contains("transferd service"), "\(refusal.message)")

        #expect(chmod(sticky, 0o777) == 0)
        #expect(Landing.stickyRefusal(in: handle, name: "report.pdf", destination: sticky + "/report.pdf") == nil, "not sticky")
    }
}
