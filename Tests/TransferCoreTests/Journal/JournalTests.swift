import Foundation
import Logging
import Testing
@testable import TransferCore

@Suite("Journal")
struct JournalTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    private func value(_ text: String) -> [UInt8] { Array("{\"v\":\"\(text)\"}".utf8) }

    /// Writes `count` puts and returns the file's bytes and the offset where each record starts.
    private func writeRecords(_ directory: TemporaryDirectory, count: Int) async throws -> ([UInt8], [Int]) {
        let journal = try Journal(directory: directory.path, logger: logger)
        for index in 0..<count {
            try await journal.commit([.put(key: "job/\(index)", value: value("value \(index)"))])
        }
        let bytes = try #require(FileManager.default.contents(atPath: journal.path)).map { $0 }
        var starts = [0]
        for (offset, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") && offset + 1 < bytes.count {
            starts.append(offset + 1)
        }
        return (bytes, starts)
    }

    @Test func recordsNobodyWaitsForShareTheNextWaitersSync() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Put off for a minute: only the commit writes them.
        let journal = try Journal(directory: directory.path, lazyWriteNanoseconds: 60_000_000_000, logger: logger)
        let before = journal.statistics
        journal.write([.put(key: "job/a", value: value("1"))])
        journal.write([.put(key: "job/b", value: value("2"))])
        #expect(journal.statistics.recordsWritten == before.recordsWritten, "nothing written before the delay or a waiter")
        try await journal.commit([.put(key: "job/c", value: value("3"))])
        #expect(journal.statistics.syncs - before.syncs == 1)
        #expect(journal.statistics.recordsWritten - before.recordsWritten == 3)
        #expect(journal.values == ["job/a": value("1"), "job/b": value("2"), "job/c": value("3")])
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == journal.values)
    }

    @Test func recordsNobodyWaitsForAreWrittenAfterTheDelay() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.path, lazyWriteNanoseconds: 1_000_000, logger: logger)
        let before = journal.statistics.recordsWritten
        journal.write([.put(key: "job/a", value: value("1"))])
        let deadline = ContinuousClock.now + .seconds(30)
        while journal.statistics.recordsWritten == before && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(journal.statistics.recordsWritten == before + 1)
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == ["job/a": value("1")])
    }

    @Test func replaysPutsAndDeletes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        do {
            let journal = try Journal(directory: directory.path, logger: logger)
            try await journal.commit([.put(key: "job/a", value: value("1")), .put(key: "job/b", value: value("2"))])
            try await journal.commit([.put(key: "job/a", value: value("3")), .delete(key: "job/b")])
        }
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == ["job/a": value("3")])
    }

    @Test func tornLastRecordAtEveryOffsetRecoversAllEarlierRecords() async throws {
        let source = try TemporaryDirectory()
        defer { source.remove() }
        let (bytes, starts) = try await writeRecords(source, count: 4)
        let lastStart = try #require(starts.last)
        let expected = (0..<3).reduce(into: [String: [UInt8]]()) { $0["job/\($1)"] = value("value \($1)") }
        for cut in lastStart..<bytes.count {
            let directory = try TemporaryDirectory("torn\(cut)")
            defer { directory.remove() }
            let path = directory.file(Journal.fileName)
            try Data(bytes[..<cut]).write(to: URL(fileURLWithPath: path))
            let journal = try Journal(directory: directory.path, logger: logger)
            #expect(journal.values == expected, "cut at \(cut)")
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
            #expect(size == lastStart, "the torn tail is cut off at \(cut)")
            if cut > lastStart {
                let copies = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(Journal.fileName + ".torn-") }
                #expect(copies.count == 1, "a copy of the torn journal is kept")
            }
            // Writing goes on after the cut, and the next start sees everything.
            try await journal.commit([.put(key: "job/new", value: value("after"))])
            let reopened = try Journal(directory: directory.path, logger: logger)
            #expect(reopened.values.count == 4)
        }
    }

    @Test func flippedByteInAMiddleRecordRefusesToStart() async throws {
        let source = try TemporaryDirectory()
        defer { source.remove() }
        let (bytes, starts) = try await writeRecords(source, count: 4)
        let middle = starts[1]..<starts[2]
        for offset in middle {
            let directory = try TemporaryDirectory("flip\(offset)")
            defer { directory.remove() }
            var damaged = bytes
            damaged[offset] ^= 0x20
            let path = directory.file(Journal.fileName)
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            do {
                _ = try Journal(directory: directory.path, logger: logger)
                Issue.record("a journal with byte \(offset) flipped was accepted")
            } catch {
                #expect(error.code == .corrupt)
                #expect(error.message.contains(path))
                #expect(error.message.contains("byte offset \(starts[1])"), "\(error.message)")
            }
            // Nothing was cut or rewritten.
            #expect(FileManager.default.contents(atPath: path).map(Array.init) == damaged)
        }
    }

    @Test(arguments: [
        Journal.CompactionStep.halfOfTemporaryWritten, .temporarySynced, .renamed, .directorySynced,
    ])
    func compactionInterruptedAtEachStepRecoversTheSameState(step: Journal.CompactionStep) async throws {
        let directory = try TemporaryDirectory("compact")
        defer { directory.remove() }
        var expected: [String: [UInt8]] = [:]
        do {
            let journal = try Journal(directory: directory.path, logger: logger)
            for index in 0..<50 {
                try await journal.commit([.put(key: "job/\(index % 10)", value: value("v\(index)"))])
                expected["job/\(index % 10)"] = value("v\(index)")
            }
            try await journal.commit([.delete(key: "job/3")])
            expected["job/3"] = nil
            await #expect(throws: Journal.SimulatedCrash.self) { try await journal.compact(stopAfter: step) }
        }
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == expected)
        #expect(!FileManager.default.fileExists(atPath: directory.file(Journal.fileName + ".compact")))
        try await reopened.commit([.put(key: "job/after", value: value("x"))])
        let again = try Journal(directory: directory.path, logger: logger)
        #expect(again.values.count == expected.count + 1)
    }

    @Test func compactionKeepsTheFileProportionalToLiveRecords() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.path, policy: .init(minimumBytes: 16 << 10, ratio: 4), logger: logger)
        for index in 0..<2000 {
            try await journal.commit([.put(key: "job/\(index % 5)", value: value(String(repeating: "x", count: 100) + "\(index)"))])
        }
        #expect(journal.statistics.compactions > 0)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal.path)[.size] as? Int)
        #expect(size < 20 << 10)
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == journal.values)
        #expect(reopened.values["job/4"] == value(String(repeating: "x", count: 100) + "1999"))
    }

    @Test func groupCommitUnderEightConcurrentSubmittersLosesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.path, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        try await journal.commit([.put(key: "job/\(writer)-\(index)", value: Array("{}".utf8))])
                    }
                }
            }
            try await group.waitForAll()
        }
        let statistics = journal.statistics
        #expect(statistics.recordsWritten == 400)
        #expect(statistics.syncs < 400, "concurrent commits share syncs (\(statistics.syncs) syncs)")
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values.count == 400)
    }

    @Test func refusesKeysAndValuesItCannotStore() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.path, logger: logger)
        await #expect(throws: JournalError.self) { try await journal.commit([.put(key: "bad key", value: [])]) }
        await #expect(throws: JournalError.self) { try await journal.commit([.put(key: "job/a", value: Array("a\nb".utf8))]) }
    }

    /// Found by the journal fuzz target: a record numbered 2^64 - 1 passed every check, and the
    /// daemon then trapped computing the next number. Such a number is damage now.
    @Test func aSequenceNumberAtTheTopOfItsRangeIsDamageNotACrash() async throws {
        var valid: [UInt8] = []
        JournalRecord(sequence: 1, operation: .put, key: "job/a", value: value("a")).encode(into: &valid)
        var top: [UInt8] = []
        JournalRecord(sequence: .max, operation: .put, key: "b", value: Array("{}".utf8)).encode(into: &top)
        var after: [UInt8] = []
        JournalRecord(sequence: 2, operation: .put, key: "job/c", value: value("c")).encode(into: &after)
        #expect(JournalRecord.decode(top, at: 0) == .failure(.malformed("sequence number out of range")))
        var highest: [UInt8] = []
        JournalRecord(sequence: JournalRecord.maxSequence, operation: .delete, key: "job/a", value: []).encode(into: &highest)
        guard case .success = JournalRecord.decode(highest, at: 0) else {
            Issue.record("the largest allowed sequence number does not decode")
            return
        }

        // Last in the file, as the fuzzer found it: a torn tail, cut off; the journal opens.
        let torn = try TemporaryDirectory("top-torn")
        defer { torn.remove() }
        try Data(valid + top + Array("2 P j".utf8)).write(to: URL(fileURLWithPath: torn.file(Journal.fileName)))
        let journal = try Journal(directory: torn.path, logger: logger)
        #expect(journal.values == ["job/a": value("a")])
        try await journal.commit([.put(key: "job/next", value: value("n"))])
        #expect(try Journal(directory: torn.path, logger: logger).values.count == 2)

        // Followed by a valid record: corruption, refused with the offset.
        let corrupt = try TemporaryDirectory("top-corrupt")
        defer { corrupt.remove() }
        try Data(valid + top + after).write(to: URL(fileURLWithPath: corrupt.file(Journal.fileName)))
        do {
            _ = try Journal(directory: corrupt.path, logger: logger)
            Issue.record("a journal with a record numbered 2^64 - 1 before a valid one was accepted")
        } catch {
            #expect(error.code == .corrupt)
            #expect(error.message.contains("byte offset \(valid.count)"))
        }
    }

    @Test func recordsRoundTripAndRejectDamage() throws {
        var bytes: [UInt8] = []
        let record = JournalRecord(sequence: 7, operation: .put, key: "job/x", value: Array("{\"a\": \"b c\"}".utf8))
        record.encode(into: &bytes)
        guard case .success(let (decoded, next)) = JournalRecord.decode(bytes, at: 0) else {
            Issue.record("a fresh record does not decode")
            return
        }
        #expect(decoded == record)
        #expect(next == bytes.count)
        #expect(JournalRecord.decode(Array(bytes.dropLast()), at: 0) == .failure(.incomplete))
        var damaged = bytes
        damaged[damaged.count - 3] ^= 1
        #expect(JournalRecord.decode(damaged, at: 0) == .failure(.checksumMismatch))
    }
}

extension Result where Success == (JournalRecord, Int), Failure == JournalRecord.DecodeFailure {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.success(let a), .success(let b)): return a.0 == b.0 && a.1 == b.1
        case (.failure(let a), .failure(let b)): return a == b
        default: return false
        }
    }
}

@Suite("Torn tails")
struct TornTailTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func aCopyHoldsOnlyTheCutBytesAndAtMostFiveAreKept() async throws {
        let directory = try TemporaryDirectory("torn-copies")
        defer { directory.remove() }
        let path = directory.file(Journal.fileName)
        do {
            let journal = try Journal(directory: directory.path, logger: logger)
            try await journal.commit([.put(key: "job/a", value: Array(#"{"a":1}"#.utf8))])
        }
        let valid = try #require(FileManager.default.contents(atPath: path))
        for round in 0..<8 {
            let tail = Array("\(round + 2) P job/b 123".utf8)
            let handle = try #require(FileHandle(forWritingAtPath: path))
            handle.seekToEndOfFile()
            handle.write(Data(tail))
            try handle.close()
            _ = try Journal(directory: directory.path, logger: logger)
            #expect(FileManager.default.contents(atPath: path) == valid, "the journal is cut back to its valid records")
            let copies = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(Journal.fileName + ".torn-") }
            #expect(copies.count == min(round + 1, Journal.tornCopiesKept))
            let sizes = copies.map { FileManager.default.contents(atPath: directory.file($0))?.count ?? -1 }
            #expect(sizes.allSatisfy { $0 > 0 && $0 <= 16 }, "each copy holds the cut bytes only: \(sizes)")
        }
    }
}
