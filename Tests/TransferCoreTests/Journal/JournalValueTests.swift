import Foundation
import Logging
import Testing
@testable import TransferCore

/// The journal keeps where values lie, not the values: each is read back from the file.
@Suite("Journal values read back")
struct JournalValueTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func crc32cMatchesTheStandardCheckValues() {
        // RFC 3720 B.4 and the usual "123456789" check value.
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum(Array(0..<32)) == 0x46DD_794E)
        // Split anywhere, the checksum continues.
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for cut in [0, 1, 7, 8, 9, 500, 999, 1000] {
            #expect(CRC32C.update(CRC32C.checksum(bytes[..<cut]), bytes[cut...]) == CRC32C.checksum(bytes))
        }
    }

    @Test func aValueIsVisibleFromItsWriteOnAndAfterCompactionAndRestart() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let journal = try Journal(directory: directory.path, policy: .init(minimumBytes: 4096, ratio: 2), logger: logger)
        // Queued, not yet synced: read back all the same.
        journal.write([.put(key: "job/a", value: Array(#"{"v":1}"#.utf8))])
        #expect(journal.value(forKey: "job/a") == Array(#"{"v":1}"#.utf8))
        journal.write([.delete(key: "job/a")])
        #expect(journal.value(forKey: "job/a") == nil)
        // Many overwrites: compaction runs and moves every value.
        for round in 0..<200 {
            try await journal.commit((0..<10).map { .put(key: "job/\($0)", value: Array(#"{"round":\#(round),"job":\#($0)}"#.utf8)) })
        }
        #expect(journal.statistics.compactions > 0)
        for job in 0..<10 {
            #expect(journal.value(forKey: "job/\(job)") == Array(#"{"round":199,"job":\#(job)}"#.utf8))
        }
        let reopened = try Journal(directory: directory.path, logger: logger)
        var seen: [String: [UInt8]] = [:]
        try reopened.forEachLiveValue { key, value in seen[key] = Array(value) }
        #expect(seen == journal.values && seen.count == 10)
        #expect(reopened.value(forKey: "job/3") == Array(#"{"round":199,"job":3}"#.utf8))
    }

    /// The index holds a job's key by its id alone and every other key whole: no two keys are
    /// held alike, and each reads back as written, through a restart and a compaction.
    @Test func keysThatLookAlikeStayApart() async throws {
        let keys = ["job/a", "a", "/a", "job//a", "job/", "job", "req/a", "meta/event-seq", "job/0123456789abcde", "job/1000:a.b-c_d"]
        for key in keys {
            let held = Journal.IndexKey(key)
            #expect(held.key == key && held.keyLength == key.utf8.count)
            #expect(held.jobID == (key.hasPrefix("job/") && !key.hasPrefix("job//") ? String(key.dropFirst(4)) : nil))
        }
        #expect(Set(keys.map(Journal.IndexKey.init)).count == keys.count)
        let directory = try TemporaryDirectory()
        let journal = try Journal(directory: directory.path, logger: logger)
        try await journal.commit(keys.enumerated().map { .put(key: $1, value: Array("v\($0)".utf8)) })
        try await journal.compact()
        for (number, key) in keys.enumerated() { #expect(journal.value(forKey: key) == Array("v\(number)".utf8)) }
        let reopened = try Journal(directory: directory.path, logger: logger)
        #expect(reopened.values == Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, Array("v\($0)".utf8)) }))
    }
}
