import Foundation
import Testing
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

@Suite("Control characters and socket directories")
struct ControlCharactersTests {
    @Test func controlCharactersAreWrittenAsEscapes() {
        #expect(ControlCharacters.escaped("a\nb\rc\td") == "a\\nb\\rc\\td")
        #expect(ControlCharacters.escaped("\u{1B}[31mred\u{1B}[0m") == "\\u{1B}[31mred\\u{1B}[0m")
        #expect(ControlCharacters.escaped("\u{0}\u{7F}\u{85}\u{9B}") == "\\u{0}\\u{7F}\\u{85}\\u{9B}")
        #expect(ControlCharacters.escaped("line\u{2028}sep\u{202E}rtl\u{2066}iso") == "line\\u{2028}sep\\u{202E}rtl\\u{2066}iso")
    }

    @Test func printableTextIsReturnedAsIs() {
        for text in ["", "https://example.com/f.iso?a=1&b=2", "ünïcödé 日本 🙂", "back\\slash"] {
            #expect(ControlCharacters.escaped(text) == text)
        }
    }

    @Test func aJobIsNamedByItsIDOrByUIDAndID() {
        let job = Job(id: "nightly", state: .queued, url: "https://example.com/f", destination: "/tmp/f", createdAt: Date(), owner: 1000)
        #expect(job.ownedID == "1000:nightly")
        #expect(job.isNamed("nightly") && job.isNamed("1000:nightly"))
        #expect(!job.isNamed("1001:nightly") && !job.isNamed("other"))
    }

    @Test func aSocketDirectoryOthersMayWriteOrAnotherUserOwnsIsRefused() throws {
        let directory = NSTemporaryDirectory() + "socket-dir-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let me = getuid()
        #expect(DefaultPaths.socketDirectoryProblem(directory + "/missing", uid: me) == nil, "a missing directory is made by the daemon")
        chmod(directory, 0o700)
        #expect(DefaultPaths.socketDirectoryProblem(directory, uid: me) == nil)
        chmod(directory, 0o777)
        #expect(DefaultPaths.socketDirectoryProblem(directory, uid: me) == "may be written by others (mode 777)")
        chmod(directory, 0o1777)
        #expect(DefaultPaths.socketDirectoryProblem(directory, uid: me) == nil, "the sticky bit keeps others from replacing the socket")
        chmod(directory, 0o700)
        if me == 0 {
            #expect(chown(directory, 65534, 65534) == 0)
            #expect(DefaultPaths.socketDirectoryProblem(directory, uid: 1000) == "belongs to uid 65534, not to you (uid 1000) or root")
            let link = directory + "-link"
            #expect(symlink(directory, link) == 0)
            defer { unlink(link) }
            #expect(lchown(link, 65534, 65534) == 0)
            #expect(DefaultPaths.socketDirectoryProblem(link, uid: 1000)?.hasPrefix("is a symbolic link that belongs to uid 65534") == true)
        }
    }
}
