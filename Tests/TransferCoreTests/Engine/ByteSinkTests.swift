import Foundation
import Logging
import Testing
import TransferProtocol
@testable import TransferCore

/// Chunks gathered in blocks: the file and the digest see every byte, in order, once the sink
/// writes what it gathered; what a sync reports as kept is on disk.
@Suite("Byte sink")
struct ByteSinkTests {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })

    func sink(in directory: TemporaryDirectory, blockBytes: Int) throws -> ByteSink {
        let request = TransferRequest(
            jobID: "j", url: URL(string: "http://example.test/f")!, headers: [:], destination: directory.file("f"),
            partialPath: directory.file(".f.j.part"), overwrite: false, allowedRoots: AllowedRoots([directory.path]), logger: logger)
        guard case .success(let prepared) = TransferPreparation.prepare(request, suspended: nil) else {
            throw ScriptTimeout(what: "a partial file")
        }
        return ByteSink(file: prepared.file, offset: 0, digest: prepared.digest, blocks: ChunkBlockPool(blockBytes: blockBytes))
    }

    @Test func thePoolKeepsAFewIdleBlocksWhileASinkUsesItAndNoneAfter() {
        let pool = ChunkBlockPool(blockBytes: 4096, idleLimit: 2)
        pool.join()
        let taken = (0..<3).map { _ in pool.take() }
        taken.forEach(pool.give)
        #expect(pool.idleCount == 2)
        let again = pool.take()
        #expect(again === taken[1])
        pool.give(again)
        pool.leave()
        #expect(pool.idleCount == 0)
        // A block the digest gives back after the last sink left is not kept either.
        pool.give(ChunkBlock(capacity: 4096))
        #expect(pool.idleCount == 0)
    }

    @Test func aSinkThatEndsGivesItsBlockBack() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let pool = ChunkBlockPool(blockBytes: 4096, idleLimit: 4)
        pool.join()
        defer { pool.leave() }
        do {
            let request = TransferRequest(
                jobID: "j", url: URL(string: "http://example.test/f")!, headers: [:], destination: directory.file("f"),
                partialPath: directory.file(".f.j.part"), overwrite: false, allowedRoots: AllowedRoots([directory.path]), logger: logger)
            guard case .success(let prepared) = TransferPreparation.prepare(request, suspended: nil) else {
                throw ScriptTimeout(what: "a partial file")
            }
            let sink = ByteSink(file: prepared.file, offset: 0, digest: prepared.digest, blocks: pool)
            try sink.write(Data(repeating: 7, count: 100))
            withExtendedLifetime(sink) { #expect(pool.idleCount == 0) }
        }
        #expect(pool.idleCount == 1)
    }

    @Test func chunksOfAnySizeReachTheFileAndTheDigestInOrder() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sink = try sink(in: directory, blockBytes: 4096)
        var expected = Data()
        // Chunks smaller than a block, one that fills it exactly, and one that spans several.
        for size in [1, 100, 3995, 4096, 10_000, 7] {
            let chunk = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ expected.count) })
            try sink.write(chunk)
            expected.append(chunk)
        }
        let (kept, synced) = sink.syncNow(offset: Int64(expected.count))
        #expect(synced && kept == Int64(expected.count))
        #expect(FileManager.default.contents(atPath: sink.file.path) == expected)
        var digest = FileDigest()
        expected.withUnsafeBytes { digest.update($0) }
        #expect(sink.digest.current().sha256Hex == digest.sha256Hex)
    }

    @Test func startingOverForgetsWhatWasGathered() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let sink = try sink(in: directory, blockBytes: 4096)
        try sink.write(Data(repeating: 1, count: 5000))
        try sink.startOver()
        try sink.write(Data([2, 3]))
        try sink.flush()
        #expect(FileManager.default.contents(atPath: sink.file.path) == Data([2, 3]))
        var digest = FileDigest()
        [UInt8]([2, 3]).withUnsafeBytes { digest.update($0) }
        #expect(sink.digest.current().sha256Hex == digest.sha256Hex)
    }

    @Test func aBlockAppendsWhatFitsAndNoMore() {
        let block = ChunkBlock(capacity: 8)
        let taken = [UInt8](repeating: 7, count: 12).withUnsafeBytes { block.append($0) }
        #expect(taken == 8 && block.isFull)
        #expect(Array(block.bytes) == [UInt8](repeating: 7, count: 8))
        block.empty()
        #expect(block.isEmpty)
    }
}
