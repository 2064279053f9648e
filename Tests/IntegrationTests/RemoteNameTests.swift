import ArgumentParser
import Foundation
import Testing
@testable import transferctl

/// The names `-O` gives files, and aria2 input files as transferctl reads them.
@Suite("Remote names and input files")
struct RemoteNameTests {
    @Test(arguments: [
        ("https://example.com/pub/file.iso", "file.iso"),
        ("https://example.com/pub/file.iso?token=1#x", "file.iso"),
        ("https://example.com/a%20b.txt", "a b.txt"),
        ("https://example.com/a%2Fb", "a_b"),
        ("https://example.com/", "index.html"),
        ("https://example.com", "index.html"),
        ("https://example.com/..", "index.html"),
        ("https://example.com/%2E%2E", "index.html"),
        ("https://example.com/.bashrc", "_bashrc"),
        ("https://example.com/-rf", "_rf"),
        ("https://example.com/a%00b", "a_b"),
        ("https://example.com/x%0Ay", "x_y"),
        ("https://example.com/%E2%82%AC.txt", "€.txt"),
        ("https://example.com/%ZZ", "%ZZ"),
    ])
    func remoteNames(url: String, name: String) {
        #expect(RemoteName.of(url) == name)
    }

    @Test func longNamesAreCutKeepingTheExtension() {
        let name = RemoteName.of("https://example.com/" + String(repeating: "é", count: 300) + ".tar.gz")
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(".gz"))
        #expect(name.hasPrefix("é"))
    }

    @Test func inputFilesReadURLsWithTheirOptions() throws {
        let file = try InputFile(parsing: """
            # comment
            https://a.example/1\thttps://mirror.example/1
              out=one.bin
              header=A: b
              header=C: d

            https://a.example/2
            \tdir=sub
            \tchecksum=sha-256=\(String(repeating: "A", count: 64))
            """, name: "list")
        #expect(file.entries.count == 2)
        #expect(file.entries[0] == InputFile.Entry(url: "https://a.example/1", line: 2, out: "one.bin", headers: ["A: b", "C: d"], ignoredMirrors: 1))
        #expect(file.entries[1].dir == "sub")
        #expect(file.entries[1].sha256 == String(repeating: "a", count: 64))
    }

    @Test func destinationsOfAnInputFileFollowOutDirAndOutputDir() throws {
        let list = FileManager.default.temporaryDirectory.path + "/transferctl-list-\(UUID().uuidString).txt"
        defer { try? FileManager.default.removeItem(atPath: list) }
        try """
            https://a.example/pub/one.iso
            https://a.example/two.iso
              out=renamed.iso
            https://a.example/three.iso
              dir=relative/sub
            https://a.example/four.iso
              dir=/absolute
              out=x/four.iso
            """.write(toFile: list, atomically: true, encoding: .utf8)
        let command = try SubmitCommand.parse(["-i", list, "-d", "/base", "https://a.example/five%20.iso"])
        let current = FileManager.default.currentDirectoryPath
        #expect(try command.plan().map(\.params.destination) == [
            "/base/one.iso", "/base/renamed.iso", current + "/relative/sub/three.iso", "/absolute/x/four.iso", "/base/five .iso",
        ])
    }

    @Test(arguments: [
        ("  out=x\nhttps://a.example/", "list:1: an option line"),
        ("https://a.example/\n  split=4", "option 'split' is not supported"),
        ("https://a.example/\n  checksum=md5=abc", "checksum type 'md5' is not supported"),
        ("https://a.example/\n  nonsense", "is not an option"),
    ])
    func badInputFilesAreRefusedWithTheLine(text: String, message: String) {
        #expect {
            try InputFile(parsing: text, name: "list")
        } throws: { error in
            "\(error)".contains(message)
        }
    }
}
