import Crypto
import Foundation
import Testing
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// The hand-off's copy and digest, run at once: the digest follows the copy slice by slice.
@Suite("Upload spool: copying and digesting at once")
struct SpoolCopyTests {
    /// A temporary directory holding a source file of `size` random bytes.
    static func source(size: Int, name: String = #function) throws -> (directory: String, path: String, bytes: Data) {
        let directory = NSTemporaryDirectory() + "spoolcopy-\(name.filter(\.isLetter).prefix(30))-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let bytes = randomData(size)
        let path = directory + "/source"
        try bytes.write(to: URL(fileURLWithPath: path))
        return (directory, path, bytes)
    }

    /// `count` random bytes, eight at a time.
    static func randomData(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<(count + 7) / 8).map { _ in generator.next() as UInt64 }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }

    /// Writes `prefix` to a new `target`, then copies `size` bytes of `source` after it and `suffix`
    /// after those, as a form's spool copy is made; returns the digest of the whole.
    static func copy(
        _ source: String, size: Int64, to target: String, prefix: [UInt8] = [], suffix: [UInt8] = []
    ) throws(SpoolCopy.Failure) -> SHA256.Digest {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        let output = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        defer {
            close(input)
            close(output)
        }
        try SpoolCopy.write(prefix, at: 0, to: output, path: target, of: source)
        return try SpoolCopy.copyAndDigest(
            from: input, named: source, size: size, to: output, shift: Int64(prefix.count), suffix: suffix, path: target)
    }

    /// Copies `content` (the file `source`) as `copy` does and checks the target and the digest.
    static func expectExactCopy(of source: String, _ content: Data, to target: String, prefix: [UInt8] = [], suffix: [UInt8] = []) throws {
        let digest = try copy(source, size: Int64(content.count), to: target, prefix: prefix, suffix: suffix)
        let whole = Data(prefix) + content + Data(suffix)
        #expect(Data(digest) == Data(SHA256.hash(data: whole)))
        #expect(FileManager.default.contents(atPath: target) == whole)
    }

    @Test(arguments: [0, 1, Int(SpoolCopy.slice) - 1, Int(SpoolCopy.slice), 3 * Int(SpoolCopy.slice) + 4097])
    func theCopyIsExactAndItsDigestIsTheFiles(size: Int) throws {
        let (directory, source, bytes) = try Self.source(size: size)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.expectExactCopy(of: source, bytes, to: directory + "/copy")
    }

    @Test func bytesBeforeAndAfterTheCopyAreDigestedWithIt() throws {
        let (directory, source, bytes) = try Self.source(size: 2 * Int(SpoolCopy.slice) + 99)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let prefix = Array("--boundary\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n".utf8)
        try Self.expectExactCopy(of: source, bytes, to: directory + "/form", prefix: prefix, suffix: Array("\r\n--boundary--\r\n".utf8))
    }

    /// From a tmpfs to the temporary directory's filesystem, `copy_file_range` refuses (EXDEV) and
    /// every slice is copied by `pread`/`pwrite`, landing `shift` bytes further.
    @Test(.enabled(if: FileManager.default.isWritableFile(atPath: "/dev/shm")))
    func acrossFilesystemsEverySliceLandsInPlace() throws {
        let (directory, _, bytes) = try Self.source(size: 1)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let source = "/dev/shm/spoolcopy-\(UUID().uuidString.prefix(8))"
        let content = Self.randomData(2 * Int(SpoolCopy.slice) + 4099)
        try content.write(to: URL(fileURLWithPath: source))
        defer { unlink(source) }
        try Self.expectExactCopy(
            of: source, content, to: directory + "/copy", prefix: Array(bytes) + Array("prefix".utf8), suffix: Array("suffix".utf8))
    }

    @Test func aSourceShorterThanItsSizeFailsInALaterSliceAndSaysSo() throws {
        let size = 2 * Int(SpoolCopy.slice) + 5
        let (directory, source, _) = try Self.source(size: size)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            _ = try Self.copy(source, size: Int64(size) + Int64(SpoolCopy.slice), to: directory + "/copy")
            Issue.record("a source shorter than its size is refused")
        } catch {
            #expect(error.message.contains("became shorter while it was copied"))
            #expect(!error.spoolSide)
        }
    }
}
