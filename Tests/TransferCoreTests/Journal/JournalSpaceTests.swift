import Foundation
import Logging
import Synchronization
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// A write refused for space is not fatal (design rule 4); a failed sync is. Faults come from
/// `FileIOFaults`, each rule scoped to the test's own directory so that tests run side by side.
@Suite("Journal on a full disk")
struct JournalSpaceTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func value(_ text: String) -> [UInt8] { Array("{\"v\":\"\(text)\"}".utf8) }

    private func size(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    private func code(of body: () async throws -> Void) async -> JournalError.Code? {
        do {
            try await body()
            return nil
        } catch let error as JournalError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test func aWriteRefusedForSpaceIsCutBackAndWrittenOnceSpaceIsBack() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fatal = Mutex<JournalError?>(nil)
        do {
            let journal = try Journal(directory: directory.path, logger: logger) { error in fatal.withLock { $0 = error } }
            try await journal.commit([.put(key: "job/a", value: value("a"))])
            let synced = try size(journal.path)
            // The disk stays full (the journal's own retry is refused too) until the test frees it.
            FileIOFaults.inject("write", pathPrefix: journal.path, errno: ENOSPC, count: Int.max)
            let refused = await code {
                try await journal.commit([.put(key: "job/progress", value: value("p1")), .put(key: "job/b", value: value("b"))])
            }
            #expect(refused == .noSpace)
            #expect(try size(journal.path) == synced, "cut back to the last complete record")
            #expect(journal.isShortOfSpace)
            // What the journal answers stays what it will write: the records wait in memory.
            #expect(journal.value(forKey: "job/progress") == value("p1"))
            // The refused writer withdraws its record; the other stays for the next write.
            journal.withdraw(keys: ["job/b"])
            FileIOFaults.remove(pathPrefix: journal.path)
            try await journal.commit([.put(key: "job/c", value: value("c"))])
            #expect(!journal.isShortOfSpace)
            #expect(journal.statistics.spaceRefusals >= 1, "refused at least once (the retry every 2 s may be refused too)")
        }
        fatal.withLock { #expect($0 == nil, "a write refused for space is not fatal: \(String(describing: $0))") }
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == ["job/a": value("a"), "job/progress": value("p1"), "job/c": value("c")])
    }

    @Test func quotaRefusalsAreNotFatalEither() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fatal = Mutex(false)
        let journal = try Journal(directory: directory.path, logger: logger) { _ in fatal.withLock { $0 = true } }
        FileIOFaults.inject("write", pathPrefix: journal.path, errno: EDQUOT, count: 2)
        #expect(await code { try await journal.commit([.put(key: "job/a", value: value("a"))]) } == .noSpace)
        #expect(await code { try await journal.sync() } == .noSpace, "still refused: the kept record is tried again")
        try await journal.commit([])
        #expect(journal.values == ["job/a": value("a")], "written once the disk takes it")
        #expect(!fatal.withLock { $0 })
    }

    @Test func aFailedSyncStaysFatal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fatal = Mutex<JournalError?>(nil)
        let journal = try Journal(directory: directory.path, logger: logger) { error in fatal.withLock { $0 = error } }
        FileIOFaults.inject("fdatasync", pathPrefix: journal.path, errno: ENOSPC)
        #expect(await code { try await journal.commit([.put(key: "job/a", value: value("a"))]) } == .io)
        #expect(fatal.withLock { $0?.code } == .io)
        #expect(await code { try await journal.commit([.put(key: "job/b", value: value("b"))]) } == .failed)
    }

    @Test func aTornTailWhoseCopyHasNoRoomIsCutAnyway() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file(Journal.fileName)
        do {
            let journal = try Journal(directory: directory.path, logger: logger)
            try await journal.commit([.put(key: "job/a", value: value("a"))])
        }
        let whole = try size(path)
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("00000042 1234".utf8))
        try handle.close()
        FileIOFaults.inject("write", pathPrefix: path + ".torn-", errno: ENOSPC)
        let journal = try Journal(directory: directory.path, logger: logger)
        #expect(journal.values == ["job/a": value("a")])
        #expect(try size(path) == whole)
        let copies = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".torn-") }
        #expect(copies.isEmpty, "the copy that did not fit is removed: \(copies)")
    }

    @Test func aCompactionRefusedForSpaceKeepsTheOldJournal() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fatal = Mutex(false)
        let journal = try Journal(directory: directory.path, logger: logger) { _ in fatal.withLock { $0 = true } }
        for round in 0..<3 { try await journal.commit([.put(key: "job/a", value: value("a\(round)"))]) }
        let before = try size(journal.path)
        FileIOFaults.inject("write", pathPrefix: journal.path + ".compact", errno: ENOSPC)
        #expect(await code { try await journal.compact() } == .noSpace)
        #expect(try size(journal.path) == before)
        #expect(!FileManager.default.fileExists(atPath: journal.path + ".compact"))
        try await journal.commit([.put(key: "job/b", value: value("b"))])
        try await journal.compact()
        #expect(journal.values == ["job/a": value("a2"), "job/b": value("b")])
        #expect(!fatal.withLock { $0 })
    }
}
