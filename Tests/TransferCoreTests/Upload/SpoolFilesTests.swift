import Foundation
import Testing
@testable import TransferCore

/// Files in the spool cost an inode each, whatever their size: one user's hand-offs are counted.
@Suite("Upload spool: files per user")
struct SpoolFilesTests {
    @Test func zeroByteHandOffsAreCountedPerUser() throws {
        var quota = Spool.Quota(perUser: 1 << 30, total: 1 << 30)
        quota.filesPerUser = 3
        let (spool, source, _) = try SpoolTests.setUp(size: 0, quota: quota)
        for _ in 0..<3 { _ = try spool.ingest(path: source, owner: 1) }
        do {
            _ = try spool.ingest(path: source, owner: 1)
            Issue.record("a fourth file was spooled for a user allowed three")
        } catch {
            #expect(error.kind == .limitReached("upload_spool_files_per_user"))
            #expect(error.message.contains("upload_spool_files_per_user"))
        }
        // Another user's count is their own.
        _ = try spool.ingest(path: source, owner: 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: spool.directory).count == 4, "the refused copy left nothing")
    }
}
