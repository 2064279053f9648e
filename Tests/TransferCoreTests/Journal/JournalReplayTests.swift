import Foundation
import Testing
import TransferCore

/// `Journal.replay`, the in-memory recovery the fuzz target drives, on bytes built here.
@Suite("Journal replay")
struct JournalReplayTests {
    private func value(_ text: String) -> [UInt8] { Array("{\"v\":\"\(text)\"}".utf8) }

    /// A journal of puts `job/0`… numbered from 1, and the offset where each record starts.
    private func journal(count: Int) -> ([UInt8], [Int]) {
        var bytes: [UInt8] = []
        var starts: [Int] = []
        for index in 0..<count {
            starts.append(bytes.count)
            bytes += Journal.snapshot(of: ["job/\(index)": value("\(index)")], firstSequence: UInt64(index + 1))
        }
        return (bytes, starts)
    }

    @Test func replaysInMemoryWithoutAFile() throws {
        let (bytes, _) = journal(count: 3)
        let replayed = try Journal.replay(bytes)
        #expect(replayed.live == ["job/0": value("0"), "job/1": value("1"), "job/2": value("2")])
        #expect(replayed.lastSequence == 3)
        #expect(replayed.validBytes == bytes.count)
        #expect(try Journal.replay([]) == JournalReplay())
    }

    @Test func aTornTailEndsTheValidBytes() throws {
        let (bytes, starts) = journal(count: 3)
        for cut in (starts[2] + 1)..<bytes.count {
            let replayed = try Journal.replay(Array(bytes[..<cut]))
            #expect(replayed.validBytes == starts[2], "cut at \(cut)")
            #expect(replayed.live.count == 2)
            #expect(replayed.lastSequence == 2)
        }
        var garbage = bytes
        garbage += Array("3 P job/x 99 0000\n".utf8)
        #expect(try Journal.replay(garbage).validBytes == bytes.count, "a bad last line is a torn tail")
    }

    @Test func aBadRecordFollowedByAValidOneIsCorruptionNamingTheOffset() {
        let (bytes, starts) = journal(count: 3)
        var damaged = bytes
        damaged[starts[1] + 2] ^= 0x01
        do {
            _ = try Journal.replay(damaged, path: "/var/lib/transferd/journal.log")
            Issue.record("a damaged middle record was accepted")
        } catch {
            #expect(error.code == .corrupt)
            #expect(error.message.contains("/var/lib/transferd/journal.log"))
            #expect(error.message.contains("byte offset \(starts[1])"))
        }
    }

    @Test func sequenceNumbersMustIncrease() {
        var bytes = Journal.snapshot(of: ["job/a": value("a")], firstSequence: 5)
        bytes += Journal.snapshot(of: ["job/b": value("b")], firstSequence: 5)
        #expect(throws: JournalError.self) { try Journal.replay(bytes) }
    }

    /// The fuzz target's seed journals are what their names say, so the fuzzer starts from valid,
    /// torn and corrupt journals alike.
    @Test func theFuzzSeedJournalsAreWhatTheirNamesSay() throws {
        let seeds = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Fuzz/corpus/journal-recovery").standardized
        func replay(_ name: String) throws -> (JournalReplay, Int) {
            let bytes = try [UInt8](Data(contentsOf: seeds.appendingPathComponent(name)))
            return (try Journal.replay(bytes), bytes.count)
        }
        for name in ["empty", "one-put", "puts-and-deletes", "after-compaction"] {
            let (replayed, count) = try replay(name)
            #expect(replayed.validBytes == count, "\(name) is whole")
        }
        #expect(try replay("puts-and-deletes").0.live.keys.sorted() == ["job/job-1", "job/job-3"])
        for name in ["torn-tail-mid-record", "torn-tail-no-newline", "torn-tail-bad-checksum"] {
            let (replayed, count) = try replay(name)
            #expect(replayed.validBytes < count, "\(name) has a torn tail")
            #expect(!replayed.live.isEmpty)
        }
        // Found by the fuzzer: a record numbered 2^64 - 1, then a torn one; all of it is the tail.
        #expect(try replay("sequence-at-the-top-then-torn").0 == JournalReplay())
        for name in ["corrupt-middle-record", "sequence-does-not-increase"] {
            #expect(throws: JournalError.self, "\(name) is refused") { try replay(name) }
        }
    }

    @Test func aSnapshotReplaysToTheSameKeysInKeyOrder() throws {
        let live = ["job/b": value("2"), "job/a": value("1"), "job/c": []]
        let bytes = Journal.snapshot(of: live, firstSequence: 10)
        let replayed = try Journal.replay(bytes)
        #expect(replayed.live == live)
        #expect(replayed.lastSequence == 12)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("10 P job/a "))
    }
}
