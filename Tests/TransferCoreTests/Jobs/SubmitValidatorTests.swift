import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
import TransferProtocol
@testable import TransferCore

@Suite("Submit validation")
struct SubmitValidatorTests {
    /// Validates as the test's own user, with `roots` (anywhere by default).
    private func validate(_ path: String, overwrite: Bool = false, roots: AllowedRoots = .everywhere) throws(CoreError) {
        try SubmitValidator.validateDestination(path, overwrite: overwrite, roots: roots, owner: DownloadOwner(uid: geteuid(), gid: nil))
    }

    @Test(arguments: ["ftp://example.com/x", "file:///etc/passwd", "not a url", "http://", "/relative"])
    func refusesURLsThatAreNotHTTP(url: String) {
        #expect(throws: CoreError.self) { try SubmitValidator.validateURL(url) }
    }

    @Test func acceptsHTTPAndHTTPS() throws {
        _ = try SubmitValidator.validateURL("http://127.0.0.1:8080/a")
        _ = try SubmitValidator.validateURL("HTTPS://example.com/a?b=c")
    }

    @Test func refusesRelativeAndDotDestinations() throws {
        for path in ["relative/file", "/tmp/../etc/x", "/tmp/./x", "/tmp/dir/", "/no/such/directory/file"] {
            do {
                try validate(path)
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.kind == .invalidDestination, "\(path): \(error.message)")
            }
        }
    }

    @Test func refusesAnExistingDestinationWithoutOverwrite() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("exists")
        _ = FileManager.default.createFile(atPath: path, contents: Data("x".utf8))
        do {
            try validate(path)
            Issue.record("an existing file was accepted without overwrite")
        } catch {
            #expect(error.kind == .destinationExists)
            #expect(error.message.contains("overwrite"))
        }
        try validate(path, overwrite: true)
    }

    @Test func refusesASymbolicLinkAtTheDestinationOrOnItsWay() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let roots = AllowedRoots([directory.file("root")])
        try FileManager.default.createDirectory(atPath: directory.file("root"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory.file("outside"), withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory.file("outside/target"), contents: Data("x".utf8))
        #expect(symlink(directory.file("outside/target"), directory.file("root/file")) == 0)
        #expect(symlink(directory.file("outside"), directory.file("root/dir")) == 0)
        for (path, overwrite) in [(directory.file("root/file"), true), (directory.file("root/file"), false), (directory.file("root/dir/new"), false)] {
            do {
                try validate(path, overwrite: overwrite, roots: roots)
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.kind == .invalidDestination)
                #expect(error.message.contains("symbolic link"), "\(error.message)")
            }
        }
    }

    @Test func refusesADestinationOutsideTheRootsNamingTheSetting() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let roots = AllowedRoots([directory.file("root")], setting: "allowed_roots in /etc/transferd/transferd.json")
        do {
            try validate(directory.file("elsewhere"), roots: roots)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .invalidDestination)
            #expect(error.message.contains("outside the allowed roots") && error.message.contains("allowed_roots in /etc/transferd/transferd.json"))
        }
    }

    @Test func refusesHeaderInjectionAndReservedHeaders() {
        #expect(throws: CoreError.self) { try SubmitValidator.validateHeaders(["X-A": "a\r\nHost: evil"]) }
        #expect(throws: CoreError.self) { try SubmitValidator.validateHeaders(["Bad Name": "x"]) }
        #expect(throws: CoreError.self) { try SubmitValidator.validateHeaders(["Range": "bytes=5-"]) }
        #expect(throws: Never.self) { try SubmitValidator.validateHeaders(["Authorization": "Bearer x"]) }
    }

    @Test(arguments: [
        "a\r\n b", "a\n\tfolded", "a\u{0}b", "a\u{7F}", "a\u{85}b", "a\u{9B}", "a\u{2028}b", "a\u{2029}", "a\u{1B}[31m",
    ])
    func refusesControlCharactersInValuesWithoutQuotingTheValue(value: String) throws {
        let secret = "Bearer hunter2-" + value
        do {
            try SubmitValidator.validateHeaders(["Authorization": secret])
            Issue.record("\(value.debugDescription) was accepted")
        } catch {
            #expect(error.kind == .invalidHeader)
            #expect(error.message.contains("Authorization") && error.message.contains("U+"), "\(error.message)")
            #expect(!error.message.contains("hunter2"), "the value is never quoted: \(error.message)")
        }
    }

    @Test func acceptsTabsAndNonASCIIText() throws {
        try SubmitValidator.validateHeaders(["X-Note": "caf\u{E9}\tau lait", "Cookie": "a=b; c=d", "X-Empty": ""])
    }

    @Test func boundsHeaderCountSizesAndRefusesDuplicatesAndHopByHopHeaders() {
        func refuses(_ headers: [String: String], _ why: Comment) {
            #expect(throws: CoreError.self, why) { try SubmitValidator.validateHeaders(headers) }
        }
        refuses(Dictionary(uniqueKeysWithValues: (0...SubmitValidator.maxHeaderCount).map { ("X-H\($0)", "v") }), "too many headers")
        refuses(["X-Long": String(repeating: "v", count: SubmitValidator.maxHeaderValueBytes + 1)], "a value too long")
        refuses([String(repeating: "n", count: SubmitValidator.maxHeaderNameBytes + 1): "v"], "a name too long")
        refuses(
            Dictionary(uniqueKeysWithValues: (0..<5).map { ("X-H\($0)", String(repeating: "v", count: SubmitValidator.maxHeaderValueBytes)) }),
            "too many bytes in all")
        refuses(["Authorization": "Bearer a", "authorization": "Bearer b"], "the same name twice")
        for name in ["TE", "Upgrade", "Expect", "Keep-Alive", "Trailer", "Proxy-Connection", "Host", "Content-Length"] {
            refuses([name: "x"], "\(name) is transferd's")
        }
        refuses(["X:Y": "v"], "a colon in a name")
        refuses(["X\u{E9}": "v"], "a non-ASCII name")
    }

    @Test(arguments: ["http://exa%0d%0ample.com/", "http://exa%20mple.com/", "http://a%2Fb.example/", "http://x%40y.example/"])
    func refusesHostsWithCharactersNoHostNameHas(url: String) {
        #expect(throws: CoreError.self) { try SubmitValidator.validateURL(url) }
    }

    @Test func urlErrorsDoNotRepeatCredentials() {
        for url in ["http://user:hunter2@/x", "gopher://user:hunter2@example.com/", "http://user:hunter2@exa mple.com/"] {
            do {
                _ = try SubmitValidator.validateURL(url)
                Issue.record("\(url) was accepted")
            } catch {
                #expect(!error.message.contains("hunter2"), "\(error.message)")
            }
        }
    }

    @Test func partialFileNameFitsInAFileName() {
        let long = "/tmp/" + String(repeating: "a", count: 255)
        let partial = PartialPath.for(destination: long, jobID: String(repeating: "b", count: 128))
        let name = partial.split(separator: "/").last.map(String.init) ?? ""
        #expect(name.utf8.count <= 255)
        #expect(partial.hasPrefix("/tmp/."))
    }
}
