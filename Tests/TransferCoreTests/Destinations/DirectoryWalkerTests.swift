import Foundation
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

@Suite("Walking to a destination's directory")
struct DirectoryWalkerTests {
    static let methods: [DirectoryWalker.Method] = [.automatic, .componentWise]

    /// A root with `a/b` inside, and a directory outside it for links to point to.
    private struct Tree {
        let base: TemporaryDirectory
        var root: String { base.file("root") }
        var outside: String { base.file("outside") }
        var roots: AllowedRoots { AllowedRoots([root]) }

        init(_ name: String = #function) throws {
            base = try TemporaryDirectory(name)
            try FileManager.default.createDirectory(atPath: base.file("root/a/b"), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: base.file("outside/b"), withIntermediateDirectories: true)
        }

        func open(_ path: String, access: UserAccess? = nil, method: DirectoryWalker.Method) throws(DestinationError) -> DirectoryHandle {
            try DirectoryWalker.open(try DestinationPath.parse(path, roots: roots), access: access, method: method)
        }

        func rule(_ path: String, access: UserAccess? = nil, method: DirectoryWalker.Method) -> DestinationError.Rule? {
            do {
                _ = try open(path, access: access, method: method)
                return nil
            } catch {
                return error.rule
            }
        }
    }

    @Test(arguments: methods)
    func opensTheDirectoryAFileLandsIn(method: DirectoryWalker.Method) throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        let handle = try tree.open(tree.root + "/a/b/file", method: method)
        #expect(handle.path == tree.root + "/a/b")
        let marker = openat(handle.fd, "marker", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        #expect(marker >= 0)
        close(marker)
        #expect(FileManager.default.fileExists(atPath: tree.root + "/a/b/marker"))
        let top = try tree.open(tree.root + "/file", method: method)
        #expect(top.path == tree.root)
    }

    @Test(arguments: methods)
    func refusesASymbolicLinkAnywhereBelowTheRoot(method: DirectoryWalker.Method) throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        // A link as the last directory, as a middle one, and one that stays inside the root.
        #expect(symlink(tree.outside, tree.root + "/a/out") == 0)
        #expect(symlink(tree.outside, tree.root + "/link") == 0)
        #expect(symlink("a", tree.root + "/inside") == 0)
        #expect(tree.rule(tree.root + "/a/out/file", method: method) == .symbolicLink)
        #expect(tree.rule(tree.root + "/link/b/file", method: method) == .symbolicLink)
        #expect(tree.rule(tree.root + "/inside/b/file", method: method) == .symbolicLink)
        do {
            _ = try tree.open(tree.root + "/link/b/file", method: method)
        } catch {
            #expect(error.message.contains(tree.root + "/link is a symbolic link"), "\(error.message)")
        }
    }

    @Test(arguments: methods)
    func aRootThatIsItselfALinkIsFollowed(method: DirectoryWalker.Method) throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        let linkedRoot = tree.base.file("linked-root")
        #expect(symlink(tree.root, linkedRoot) == 0)
        let path = try DestinationPath.parse(linkedRoot + "/a/b/file", roots: AllowedRoots([linkedRoot]))
        let handle = try DirectoryWalker.open(path, access: nil, method: method)
        var info = stat()
        #expect(fstat(handle.fd, &info) == 0)
        #expect(UInt64(info.st_ino) == (try FileManager.default.attributesOfItem(atPath: tree.root + "/a/b")[.systemFileNumber] as? UInt64))
    }

    @Test(arguments: methods)
    func namesAMissingDirectoryAndAFileInTheWay(method: DirectoryWalker.Method) throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        _ = FileManager.default.createFile(atPath: tree.root + "/a/plain", contents: Data())
        #expect(tree.rule(tree.root + "/a/missing/file", method: method) == .missing)
        #expect(tree.rule(tree.root + "/a/plain/file", method: method) == .notDirectory)
        let missingRoot = try DestinationPath.parse(tree.base.file("nowhere/file"), roots: AllowedRoots([tree.base.file("nowhere")]))
        #expect(throws: DestinationError.self) { try DirectoryWalker.open(missingRoot, access: nil, method: method) }
    }

    @Test func aUserMustBeAbleToEnterEachDirectoryAndWriteTheLast() throws {
        let tree = try Tree()
        defer { tree.base.remove() }
        // Owned by the test's user; judged for another uid, whose access comes from the mode's
        // group and other bits.
        let stranger = UserAccess(uid: geteuid() &+ 4242, groups: [])
        chmod(tree.root, 0o755)
        chmod(tree.root + "/a", 0o755)
        chmod(tree.root + "/a/b", 0o755)
        #expect(tree.rule(tree.root + "/a/b/file", access: stranger, method: .automatic) == .userPermission)
        chmod(tree.root + "/a/b", 0o777)
        #expect(tree.rule(tree.root + "/a/b/file", access: stranger, method: .automatic) == nil)
        chmod(tree.root + "/a", 0o770)
        #expect(tree.rule(tree.root + "/a/b/file", access: stranger, method: .automatic) == .userPermission)
        let member = UserAccess(uid: geteuid() &+ 4242, groups: [getegid()])
        #expect(tree.rule(tree.root + "/a/b/file", access: member, method: .automatic) == nil)
        do {
            _ = try tree.open(tree.root + "/a/b/file", access: stranger, method: .automatic)
        } catch {
            #expect(error.message.contains("may not enter \(tree.root)/a"), "\(error.message)")
        }
    }

    @Test func accessFollowsTheOwnerThenTheGroupThenEveryoneElse() {
        var info = stat()
        info.st_uid = 1000
        info.st_gid = 100
        info.st_mode = S_IFDIR | 0o575
        let owner = UserAccess(uid: 1000, groups: [100])
        let member = UserAccess(uid: 1001, groups: [100])
        let other = UserAccess(uid: 1002, groups: [7])
        // The owner's bits apply to the owner even when the group's are wider.
        #expect(!owner.mayWrite(info) && owner.maySearch(info))
        #expect(member.mayWrite(info))
        #expect(other.mayWrite(info) == false && other.maySearch(info))
        var sticky = info
        sticky.st_mode = S_IFDIR | S_ISVTX | 0o777
        var file = stat()
        file.st_uid = 1001
        #expect(member.mayReplace(file, in: sticky))
        #expect(!other.mayReplace(file, in: sticky))
        #expect(other.mayReplace(file, in: info))
    }

    @Test func theAccountsGroupsAreLookedUp() {
        let access = UserAccess.lookUp(uid: 0, gid: nil)
        #expect(access.groups.contains(0))
        let unknown = UserAccess.lookUp(uid: 4_000_000_000, gid: 55)
        #expect(unknown.groups == [55])
    }
}
