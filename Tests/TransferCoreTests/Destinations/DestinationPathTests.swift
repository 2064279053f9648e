import Testing
@testable import TransferCore

@Suite("Destination paths")
struct DestinationPathTests {
    let roots = AllowedRoots(["/srv/transferd", "/srv/transferd/shared/inner", "/home/alice/"], setting: "allowed_roots in /etc/transferd/transferd.json")

    private func rule(_ path: String) -> DestinationError.Rule? {
        do {
            _ = try DestinationPath.parse(path, roots: roots)
            return nil
        } catch {
            return error.rule
        }
    }

    @Test func splitsAPathIntoItsRootItsDirectoriesAndItsName() throws {
        let path = try DestinationPath.parse("/srv/transferd/a/b/file.iso", roots: roots)
        #expect(path.root == "/srv/transferd")
        #expect(path.directories == ["a", "b"])
        #expect(path.name == "file.iso")
        #expect(path.directory == "/srv/transferd/a/b")
        let direct = try DestinationPath.parse("/home/alice/file", roots: roots)
        #expect(direct.root == "/home/alice" && direct.directories.isEmpty && direct.directory == "/home/alice")
    }

    @Test func theInnermostRootIsTheOneWalkedFrom() throws {
        let path = try DestinationPath.parse("/srv/transferd/shared/inner/x/file", roots: roots)
        #expect(path.root == "/srv/transferd/shared/inner")
        #expect(path.directories == ["x"])
    }

    @Test func repeatedSlashesAreOneSeparator() throws {
        let path = try DestinationPath.parse("/srv//transferd///a//file", roots: roots)
        #expect(path.root == "/srv/transferd" && path.directories == ["a"] && path.name == "file")
    }

    @Test(arguments: [
        "/srv/transferd/../../etc/passwd", "/srv/transferd/a/../../../etc/shadow", "/srv/transferd/./file", "/srv/transferd/..",
        "relative/file", "/srv/transferd/dir/", "/srv/transferd", "/srv/transferd/bad\u{0}name",
        "/srv/transferd/" + String(repeating: "n", count: 256), "/srv/transferd/" + String(repeating: "n", count: 4096),
        "/srv/transferd/" + String(repeating: "d/", count: 2100) + "file",
    ])
    func refusesTheFormsThatCouldEscapeOrOverflow(path: String) {
        #expect(rule(path) == .form, "\(path.prefix(80))")
    }

    @Test(arguments: ["/etc/passwd", "/srv/transferd-evil/file", "/srv/file", "/home/alicex/file", "/home/file", "/file"])
    func refusesPathsOutsideEveryRoot(path: String) {
        #expect(rule(path) == .outsideRoots, "\(path)")
    }

    @Test func theOutsideMessageNamesTheRootsAndTheSetting() {
        do {
            _ = try DestinationPath.parse("/etc/cron.d/job", roots: roots)
            Issue.record("accepted")
        } catch {
            #expect(error.message.contains("/etc/cron.d/job is outside the allowed roots (/srv/transferd, /srv/transferd/shared/inner, /home/alice)"))
            #expect(error.message.contains("add its directory to allowed_roots in /etc/transferd/transferd.json"), "\(error.message)")
        }
    }

    @Test func eachFormRuleSaysWhatIsWrong() {
        let cases: [(String, String)] = [
            ("/srv/transferd/a/../b", "'..'"),
            ("/srv/transferd/a\u{0}", "NUL"),
            ("/srv/transferd/" + String(repeating: "n", count: 300), "NAME_MAX"),
            ("/srv/transferd/" + String(repeating: "d/", count: 2100) + "f", "PATH_MAX"),
            ("srv/file", "absolute"),
        ]
        for (path, words) in cases {
            do {
                _ = try DestinationPath.parse(path, roots: roots)
                Issue.record("\(path.prefix(40)) accepted")
            } catch {
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
    }

    @Test func rootsAreNormalizedAndBadOnesRefused() {
        #expect(AllowedRoots.normalize("/srv//transferd/") == "/srv/transferd")
        #expect(AllowedRoots.normalize("/") == "/")
        #expect(AllowedRoots.normalize("srv") == nil)
        #expect(AllowedRoots.normalize("/srv/../etc") == nil)
        #expect(AllowedRoots.normalize("/srv/./x") == nil)
        #expect(AllowedRoots(["/a/", "/a", "/b"]).paths == ["/a", "/b"])
    }

    @Test func everywhereHoldsAnyAbsolutePath() throws {
        let path = try DestinationPath.parse("/tmp/x/file", roots: .everywhere)
        #expect(path.root == "/" && path.directories == ["tmp", "x"])
    }
}
