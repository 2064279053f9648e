import Foundation
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

@Suite("Partial files")
struct PartialFileTests {
    private func directory(_ base: TemporaryDirectory) throws -> DirectoryHandle {
        try DirectoryWalker.open(try DestinationPath.parse(base.file("file"), roots: AllowedRoots([base.path])), access: nil)
    }

    private func foreign(_ base: TemporaryDirectory, keeping: Int64 = 0) throws -> Bool {
        let handle = try directory(base)
        do throws(PartialFile.OpenError) {
            _ = try PartialFile.open(in: handle, name: ".file.j.part", keeping: keeping, owner: nil)
            return false
        } catch {
            guard case .foreign(let refusal) = error else { return false }
            return refusal.rule == .foreignFile
        }
    }

    @Test func isCreatedPrivateAndReopenedAtTheResumePoint() throws {
        let base = try TemporaryDirectory()
        defer { base.remove() }
        let (file, offset, _) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 0, owner: nil)
        #expect(offset == 0)
        let attributes = try FileManager.default.attributesOfItem(atPath: base.file(".file.j.part"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try FileIO.writeAll(file.fd, [UInt8](repeating: 1, count: 100), path: file.path)
        let (again, resumed, _) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 60, owner: nil)
        #expect(resumed == 60)
        #expect(again.inode == file.inode)
        var info = stat()
        #expect(fstat(again.fd, &info) == 0 && info.st_size == 60)
    }

    @Test func rangesKeptPastTheResumePointStayWhenTheFileHoldsThem() throws {
        let base = try TemporaryDirectory()
        defer { base.remove() }
        let (file, _, _) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 0, owner: nil)
        try FileIO.writeAll(file.fd, [UInt8](repeating: 1, count: 100), path: file.path)
        // Kept up to byte 80, writes continue at 40.
        let (again, offset, kept) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 40, extent: 80, owner: nil)
        #expect(offset == 40 && kept)
        var info = stat()
        #expect(fstat(again.fd, &info) == 0 && info.st_size == 80)
        #expect(lseek(again.fd, 0, SEEK_CUR) == 40)
        // A file shorter than the ranges said: only the resume point stays.
        let (third, offset3, kept3) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 40, extent: 200, owner: nil)
        #expect(offset3 == 40 && !kept3)
        #expect(fstat(third.fd, &info) == 0 && info.st_size == 40)
    }

    @Test func aLinkAtThePartialNameIsNeitherFollowedNorTaken() throws {
        let base = try TemporaryDirectory()
        defer { base.remove() }
        let target = base.file("target")
        _ = FileManager.default.createFile(atPath: target, contents: Data("keep me".utf8))
        #expect(symlink(target, base.file(".file.j.part")) == 0)
        #expect(try foreign(base))
        #expect(try foreign(base, keeping: 3))
        #expect(FileManager.default.contents(atPath: target) == Data("keep me".utf8))
    }

    @Test func aHardLinkedFileAtThePartialNameIsNotTaken() throws {
        let base = try TemporaryDirectory()
        defer { base.remove() }
        let target = base.file("target")
        _ = FileManager.default.createFile(atPath: target, contents: Data("keep me".utf8))
        #expect(link(target, base.file(".file.j.part")) == 0)
        #expect(try foreign(base, keeping: 3))
        #expect(FileManager.default.contents(atPath: target) == Data("keep me".utf8))
    }

    @Test(.enabled(if: geteuid() == 0, "skipped: giving files to other users needs root"))
    func aFileOfAThirdUserIsNotTakenAndNewFilesGoToTheOwner() throws {
        let base = try TemporaryDirectory()
        defer { base.remove() }
        let partial = base.file(".file.j.part")
        _ = FileManager.default.createFile(atPath: partial, contents: Data("x".utf8))
        #expect(chown(partial, 4242, 4242) == 0)
        #expect(try foreign(base))
        unlink(partial)
        let owner = DownloadOwner(uid: 4343, gid: 4444)
        let (file, _, _) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 0, owner: owner)
        var info = stat()
        #expect(fstat(file.fd, &info) == 0)
        #expect(info.st_uid == 4343 && info.st_gid == 4444)
        // Its owner's file is taken again on resume.
        let (again, _, _) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 0, owner: owner)
        #expect(again.inode == file.inode)
    }

    @Test func unlinkRemovesOnlyItsOwnName() throws {
        let base = try TemporaryDirectory()
        defer { base.remove() }
        let (file, _, _) = try PartialFile.open(in: try directory(base), name: ".file.j.part", keeping: 0, owner: nil)
        // Replaced by someone who may write the directory: left alone.
        #expect(rename(base.file(".file.j.part"), base.file("moved")) == 0)
        _ = FileManager.default.createFile(atPath: base.file(".file.j.part"), contents: Data("other".utf8))
        file.unlink()
        #expect(FileManager.default.contents(atPath: base.file(".file.j.part")) == Data("other".utf8))
        #expect(!file.isInPlace)
    }
}
