public import Crypto
import Synchronization

/// Deterministic pseudo-random file content of any size, cheap to produce at any offset.
///
/// One 1 MiB block is generated from the seed. Each MiB of the file (index `b`) is that block rotated by
/// an amount derived from the seed and `b`, so byte `i` is
/// `block[(i % 1 MiB + rotation(i / 1 MiB)) % 1 MiB]`: every MiB differs, and a byte written at the
/// wrong offset is detected. Any range is produced with at most two `memcpy`s per MiB.
///
/// Copies share the generated block; the SHA-256 is computed once and cached.
public struct TestContent: Sendable, Equatable, CustomStringConvertible {
    /// The seed the content derives from.
    public let seed: UInt64
    /// The length of the content in bytes.
    public let size: Int64

    private let storage: Storage

    /// The length of the generated block, and of the unit that is rotated: 1 MiB.
    static let blockSize: Int64 = 1 << 20
    private static let blockMask: Int64 = blockSize - 1

    /// Content of `size` bytes (negative sizes count as 0) derived from `seed`.
    public init(seed: UInt64, size: Int64) {
        self.seed = seed
        self.size = max(0, size)
        self.storage = Storage(seed: seed)
    }

    public static func == (lhs: TestContent, rhs: TestContent) -> Bool {
        lhs.seed == rhs.seed && lhs.size == rhs.size
    }

    public var description: String { "TestContent(seed: \(seed), size: \(size))" }

    /// Content of the same size from another seed (what `Behaviour.changeETagAfter(requests:)` switches to).
    public var replacement: TestContent {
        TestContent(seed: seed ^ 0x5DEE_CE66_D1CE_5EED, size: size)
    }

    /// The bytes in `range`, clamped to `0..<size`.
    public func bytes(in range: Range<Int64>) -> [UInt8] {
        let clamped = clamp(range)
        let count = Int(clamped.length)
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialised in
            copyBytes(in: clamped, into: UnsafeMutableRawBufferPointer(buffer))
            initialised = count
        }
    }

    /// All the bytes. Meant for small content.
    public func allBytes() -> [UInt8] {
        bytes(in: 0..<size)
    }

    /// Copies the bytes in `range` (clamped to `0..<size`) to the start of `destination`, as many as fit.
    /// Returns how many bytes were copied.
    @discardableResult
    public func copyBytes(in range: Range<Int64>, into destination: UnsafeMutableRawBufferPointer) -> Int {
        let clamped = clamp(range)
        let wanted = clamped.lowerBound..<(clamped.lowerBound + min(clamped.length, Int64(destination.count)))
        guard let base = destination.baseAddress else { return 0 }
        var written = 0
        forEachSegment(in: wanted) { segment in
            guard let source = segment.baseAddress else { return }
            (base + written).copyMemory(from: source, byteCount: segment.count)
            written += segment.count
        }
        return written
    }

    /// Whether `bytes` equals the content at `offset` (false if it runs past the end).
    public func matches(_ bytes: some Collection<UInt8>, at offset: Int64) -> Bool {
        let end = offset + Int64(bytes.count)
        guard offset >= 0, end <= size else { return false }
        return self.bytes(in: offset..<end).elementsEqual(bytes)
    }

    /// The lowercase hex SHA-256 of the whole content, streamed in 1 MiB pieces and cached.
    public func sha256Hex() -> String {
        if let cached = storage.sha256Cache.withLock({ $0[size] }) {
            return cached
        }
        var hasher = SHA256()
        forEachSegment(in: 0..<size) { hasher.update(bufferPointer: $0) }
        let hex = Self.hex(hasher.finalize())
        storage.sha256Cache.withLock { $0[size] = hex }
        return hex
    }

    /// The raw digest of the whole content with any hash function, e.g. `digest(SHA512.self)`.
    public func digest<H: HashFunction>(_ function: H.Type) -> [UInt8] {
        var hasher = H()
        forEachSegment(in: 0..<size) { hasher.update(bufferPointer: $0) }
        return Array(hasher.finalize())
    }

    /// Lowercase hex of any bytes (e.g. a digest).
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func clamp(_ range: Range<Int64>) -> Range<Int64> {
        let lower = min(max(range.lowerBound, 0), size)
        let upper = min(max(range.upperBound, lower), size)
        return lower..<upper
    }

    /// Calls `body` with consecutive pieces of the generated block that together make `range`.
    private func forEachSegment(in range: Range<Int64>, _ body: (UnsafeRawBufferPointer) -> Void) {
        storage.block.withUnsafeBytes { block in
            var position = range.lowerBound
            while position < range.upperBound {
                let index = position >> 20
                let offset = position & Self.blockMask
                let length = min(range.upperBound - position, Self.blockSize - offset)
                let start = Int((offset + rotation(ofBlock: index)) & Self.blockMask)
                let first = min(Int(length), Int(Self.blockSize) - start)
                body(UnsafeRawBufferPointer(rebasing: block[start..<(start + first)]))
                if first < Int(length) {
                    body(UnsafeRawBufferPointer(rebasing: block[0..<(Int(length) - first)]))
                }
                position += length
            }
        }
    }

    private func rotation(ofBlock index: Int64) -> Int64 {
        Int64(truncatingIfNeeded: SplitMix64.mix(seed ^ (UInt64(index) &* 0xD6E8_FEB8_6659_FD93))) & Self.blockMask
    }

    /// The generated block, shared by copies, and the digests already computed (by size).
    private final class Storage: Sendable {
        let block: [UInt8]
        let sha256Cache = Mutex<[Int64: String]>([:])

        init(seed: UInt64) {
            var generator = SplitMix64(seed: seed)
            let words = (0..<(Int(TestContent.blockSize) / 8)).map { _ in generator.next().littleEndian }
            self.block = words.withUnsafeBytes { Array($0) }
        }
    }
}
