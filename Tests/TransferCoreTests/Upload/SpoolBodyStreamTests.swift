import Foundation
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// A plain upload's body: the spool copy read in pieces, its pages dropped from the cache once read.
@Suite("Upload body: the spool copy read as a stream")
struct SpoolBodyStreamTests {
    /// Reads `stream` as FoundationNetworking does (open it, then ask and read up to `piece` bytes)
    /// until its end, or until `limit` bytes are in `body`.
    static func readAll(_ stream: InputStream, piece: Int, into body: inout Data, limit: Int = .max) {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: piece)
        defer { buffer.deallocate() }
        if stream.streamStatus == .notOpen { stream.open() }
        while body.count < limit, stream.hasBytesAvailable {
            let count = stream.read(buffer, maxLength: piece)
            guard count > 0 else { break }
            body.append(buffer, count: count)
        }
    }

    static func readAll(_ stream: InputStream, piece: Int) -> Data {
        var body = Data()
        readAll(stream, piece: piece, into: &body)
        return body
    }

    /// How many of the pages of the file at `path` are in the page cache (`mincore`).
    static func residentPages(_ path: String, range: Range<Int>? = nil) throws -> (resident: Int, total: Int) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        var status = stat()
        try #require(fstat(descriptor, &status) == 0)
        let size = Int(status.st_size)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0)
        try #require(mapping != MAP_FAILED)
        defer { munmap(mapping, size) }
        var vector = [UInt8](repeating: 0, count: (size + page - 1) / page)
        try #require(mincore(mapping, size, &vector) == 0)
        let pages = range.map { ($0.lowerBound / page)..<min(vector.count, ($0.upperBound + page - 1) / page) } ?? vector.indices
        return (pages.filter { vector[$0] & 1 == 1 }.count, pages.count)
    }

    /// Whether `directory`'s filesystem drops a synced file's pages when advised to.
    static func dropsPages(in directory: String) throws -> Bool {
        let path = directory + "/probe"
        try Data(repeating: 7, count: 1 << 20).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        fsync(descriptor)
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        return try residentPages(path).resident == 0
    }

    @Test("the whole copy is read, in any piece size, and its pages leave the cache")
    func readsEverythingAndDropsPages() throws {
        let (directory, path, bytes) = try SpoolCopyTests.source(size: 24 << 20)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Synced, as the hand-off leaves a copy: only clean pages can be dropped.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0)
        fsync(descriptor)
        close(descriptor)
        _ = try Data(contentsOf: URL(fileURLWithPath: path))  // every page in the cache

        let drops = try Self.dropsPages(in: directory)
        if !drops { print("SpoolBodyStreamTests: \(directory) keeps advised pages (tmpfs?): dropping is not checked") }
        let stream = SpoolBodyStream(path: path)
        #expect(stream.streamStatus == .notOpen)
        // Midway, past 16 MiB (two 8 MiB boundaries): the first 16 MiB are no longer cached.
        var body = Data()
        Self.readAll(stream, piece: 1_000_003, into: &body, limit: 17 << 20)
        if drops {
            let (resident, _) = try Self.residentPages(path, range: 0..<(16 << 20))
            #expect(resident == 0, "\(resident) pages of the first 16 MiB still cached midway")
        }
        Self.readAll(stream, piece: 1_000_003, into: &body)
        #expect(body == bytes)
        #expect(stream.streamStatus == .atEnd)
        var byte: UInt8 = 0
        #expect(stream.read(&byte, maxLength: 1) == 0)
        if drops {
            let pages = try Self.residentPages(path)
            #expect(pages.resident == 0, "\(pages.resident) of \(pages.total) pages still cached")
        }
        stream.close()
        #expect(stream.streamStatus == .closed)
    }

    @Test("a new stream reads the copy again from its first byte")
    func secondStreamStartsOver() throws {
        let (directory, path, bytes) = try SpoolCopyTests.source(size: 100_000)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(Self.readAll(SpoolBodyStream(path: path), piece: 4096) == bytes)
        #expect(Self.readAll(BodyLength.stream(ofFileAt: path), piece: 65536) == bytes)
    }

    @Test("a copy that cannot be opened reads as empty and names the error")
    func missingCopyReadsEmpty() {
        let stream = SpoolBodyStream(path: "/nonexistent/spool/copy")
        #expect(Self.readAll(stream, piece: 4096).isEmpty)
        #expect(stream.streamStatus == .error)
        #expect((stream.streamError as? POSIXError)?.code == .ENOENT)
    }

    @Test("an empty copy ends at once")
    func emptyCopy() throws {
        let (directory, path, _) = try SpoolCopyTests.source(size: 0)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let stream = SpoolBodyStream(path: path)
        #expect(Self.readAll(stream, piece: 4096).isEmpty)
        #expect(stream.streamStatus == .atEnd)
    }
}
