import Crypto
import Foundation
import TransferProtocol
import RawStructuredFieldValues
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The digests of a download, fed with each chunk as it is written, so the finished file is
/// never read a second time. SHA-512 runs only when the server announces one and no SHA-256.
struct FileDigest: Sendable {
    private(set) var sha256 = SHA256()
    private(set) var sha512: SHA512?

    init(withSHA512: Bool = false) {
        sha512 = withSHA512 ? SHA512() : nil
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        sha256.update(bufferPointer: bytes)
        sha512?.update(bufferPointer: bytes)
    }

    /// The digest of the first `length` bytes of an open file: how a transfer that continues a
    /// partial file written by an earlier run of the daemon gets its running digest back.
    static func ofPrefix(fd: Int32, path: String, length: Int64, withSHA512: Bool = false) throws(FileIOError) -> FileDigest {
        var digest = FileDigest(withSHA512: withSHA512)
        guard length > 0 else { return digest }
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while offset < length {
            let want = Int(min(Int64(bufferSize), length - offset))
            let n = pread(fd, buffer.baseAddress, want, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileIOError("read", path)
            }
            // The file is shorter than its checkpoint said: the caller starts over.
            guard n > 0 else { throw FileIOError("read", path, errno: EIO) }
            digest.update(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
            offset += Int64(n)
        }
        return digest
    }

    var sha256Hex: String { Self.hex(sha256.finalize()) }
    var sha512Hex: String? { sha512.map { Self.hex($0.finalize()) } }

    static func hex<D: Sequence>(_ bytes: D) -> String where D.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(128)
        for byte in bytes { HexDigits.append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A digest the server announced for the representation (RFC 9530 `Repr-Digest`, or
/// `Content-Digest` on a 200 answer, whose content then is the whole representation).
struct AnnouncedDigest: Equatable, Sendable {
    enum Algorithm: String, Sendable { case sha256 = "sha-256", sha512 = "sha-512" }
    var algorithm: Algorithm
    /// Lowercase hex.
    var hex: String
    /// The header it came from, for messages.
    var header: String

    /// The strongest supported digest in a header value such as `sha-256=:base64…:, sha-512=:…:`;
    /// nil when the header is missing, malformed or names no supported algorithm.
    static func parse(_ value: String?, header: String) -> AnnouncedDigest? {
        guard let value else { return nil }
        var parser = StructuredFieldValueParser(Array(value.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue() else { return nil }
        var found: [Algorithm: String] = [:]
        for (key, member) in dictionary {
            guard let algorithm = Algorithm(rawValue: key.lowercased()), case .item(let item) = member,
                case .undecodedByteSequence(let base64) = item.rfc9651BareItem,
                let bytes = Data(base64Encoded: base64),
                bytes.count == (algorithm == .sha256 ? 32 : 64)
            else { continue }
            found[algorithm] = FileDigest.hex(bytes)
        }
        if let hex = found[.sha256] { return AnnouncedDigest(algorithm: .sha256, hex: hex, header: header) }
        if let hex = found[.sha512] { return AnnouncedDigest(algorithm: .sha512, hex: hex, header: header) }
        return nil
    }
}

/// A transfer's running digest, fed on its own serial queue so hashing runs beside the disk writes
/// (on another core) instead of after each of them on the delegate queue. It is fed whole blocks of
/// gathered chunks (`ChunkBlock`), one hand-off per block. The bytes waiting to be hashed count as
/// backlog, so back-pressure bounds them like the chunks waiting for the disk.
///
/// `@unchecked Sendable`: `digest` is read and written only on `queue`.
final class StreamingDigest: @unchecked Sendable {
    private let queue = DispatchQueue(label: "transferd.engine.digest")
    private var digest: FileDigest
    /// Bytes handed to `feed` and not hashed yet.
    private let pendingBytes = Atomic<Int>(0)
    /// Work waiting for the backlog to fall below a mark (`whenPending(below:_:)`).
    private let waiters = LevelWaiters()

    init(_ digest: FileDigest) {
        self.digest = digest
    }

    /// Hashes the block's bytes after everything fed before them, then hands the block to `done`.
    func feed(_ block: ChunkBlock, done: @escaping @Sendable (ChunkBlock) -> Void) {
        let count = block.count
        pendingBytes.add(count, ordering: .relaxed)
        queue.async {
            self.digest.update(block.bytes)
            self.pendingBytes.subtract(count, ordering: .relaxed)
            done(block)
            self.waiters.levelFell(to: { self.pending })
        }
    }

    /// Runs `resume` once fewer than `units` 16 KiB chunks wait to be hashed: at once when that is
    /// so already, else on the digest's queue as soon as hashing brings the backlog below it.
    func whenPending(below units: Int, _ resume: @escaping @Sendable () -> Void) {
        waiters.whenAtMost(units - 1, level: { pending }, resume)
    }

    /// Bytes waiting to be hashed, in 16 KiB chunks (the unit of the delegate queue's backlog).
    var pending: Int { (pendingBytes.load(ordering: .relaxed) + (1 << 14) - 1) >> 14 }

    /// The digest of everything fed so far (waits for the queue to catch up).
    func current() -> FileDigest {
        queue.sync { digest }
    }

    /// Starts again from `digest`, after everything fed before.
    func reset(to digest: FileDigest) {
        queue.sync { self.digest = digest }
    }
}
