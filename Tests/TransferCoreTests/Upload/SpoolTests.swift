import Crypto
import Foundation
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// The spool: exact synced copies, the quota, names good for one submit by their owner only.
@Suite("Upload spool: copies, quota, claims")
struct SpoolTests {
    /// A fresh spool in a temporary directory, and a source file of `size` bytes.
    static func setUp(size: Int, quota: Spool.Quota = .init(perUser: 1 << 30, total: 1 << 30), name: String = #function) throws -> (Spool, String, [UInt8]) {
        let directory = NSTemporaryDirectory() + "spool-\(name.filter(\.isLetter).prefix(30))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let bytes = [UInt8](SpoolCopyTests.randomData(size))
        let source = directory + "/source"
        FileManager.default.createFile(atPath: source, contents: Data(bytes))
        return (try Spool(directory: directory + "/spool", quota: quota), source, bytes)
    }

    @Test func aCopyIsExactPrivateAndDigested() throws {
        let (spool, source, bytes) = try Self.setUp(size: 3 << 20 + 17)
        let entry = try spool.ingest(path: source, owner: 1000)
        let copy = spool.path(of: entry.name)
        #expect(FileManager.default.contents(atPath: copy) == Data(bytes))
        #expect(entry.size == Int64(bytes.count))
        var info = stat()
        #expect(stat(copy, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(entry.name.count == 32 && Spool.isValidName(entry.name))
        let expected = try Self.sha256Hex(bytes)
        #expect(entry.sha256 == expected)
        // The source may go: the copy stays.
        unlink(source)
        #expect(FileManager.default.contents(atPath: copy) == Data(bytes))
    }

    @Test func theQuotaPerUserAndInAllRefusesAndKeepsNothing() throws {
        let (spool, source, _) = try Self.setUp(size: 600, quota: .init(perUser: 1000, total: 1500))
        _ = try spool.ingest(path: source, owner: 1)
        #expect(throws: CoreError.self) { _ = try spool.ingest(path: source, owner: 1) }
        _ = try spool.ingest(path: source, owner: 2)
        do {
            _ = try spool.ingest(path: source, owner: 3)
            Issue.record("the total quota refuses")
        } catch {
            #expect(error.kind == .limitReached("upload_spool_bytes_total"))
        }
        #expect(spool.bytesHeld() == 1200)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.directory).count == 2, "refused copies leave nothing")
    }

    @Test func aNameIsGoodForOneSubmitByItsOwnerOnly() throws {
        let (spool, source, _) = try Self.setUp(size: 10)
        let entry = try spool.ingest(path: source, owner: 1)
        #expect(throws: CoreError.self) { _ = try spool.claim(entry.name, owner: 2) }
        spool.discard(entry.name, owner: 2)
        #expect(FileManager.default.fileExists(atPath: spool.path(of: entry.name)), "another user cannot discard it")
        _ = try spool.claim(entry.name, owner: 1)
        #expect(throws: CoreError.self) { _ = try spool.claim(entry.name, owner: 1) }
        spool.release(entry.name)
        #expect(!FileManager.default.fileExists(atPath: spool.path(of: entry.name)))
        #expect(spool.bytesHeld() == 0)
    }

    @Test func recoveryKeepsWhatJobsHoldAndRemovesTheRest() throws {
        let (spool, source, _) = try Self.setUp(size: 10)
        let held = try spool.ingest(path: source, owner: 1)
        let orphan = try spool.ingest(path: source, owner: 1)
        let restarted = try Spool(directory: spool.directory, quota: .init(perUser: 100, total: 100))
        let removed = restarted.recover(holding: [(held.name, 1, held.size, held.sha256)])
        #expect(removed == [orphan.name])
        #expect(restarted.bytesHeld(by: 1) == 10)
    }

    @Test func onlyRegularFilesAreTaken() throws {
        let (spool, _, _) = try Self.setUp(size: 1)
        do {
            _ = try spool.ingest(path: "/dev/null", owner: 1)
            Issue.record("a device is refused")
        } catch {
            #expect(error.message.contains("/dev/null is not a regular file"))
        }
    }

    static func sha256Hex(_ bytes: [UInt8]) throws -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }
}
