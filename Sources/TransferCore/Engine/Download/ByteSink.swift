import Foundation
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Where a transfer's body goes: the partial file, its running digest, the durable checkpoints,
/// the live progress and rate, and the size of the next segment.
///
/// Chunks are gathered in a block from `blocks` (1 MiB) and written and hashed a block at a time. Bytes
/// still in the block are the file's bytes for every decision (the attempt's offset counts them);
/// they reach the file before anything depends on the file itself: a checkpoint, a sync, landing.
///
/// `@unchecked Sendable`: the plain stored properties are used only on the engine's delegate
/// queue; status readers on other threads use the atomics.
final class ByteSink: @unchecked Sendable {
    let file: PartialFile
    /// The digests of the partial file's bytes so far.
    let digest: StreamingDigest
    /// Bytes written so far, for status readers on other threads.
    let progress: Atomic<Int64>
    let rate = Atomic<Int64>(0)
    let checkpointInFlight = Atomic<Bool>(false)
    /// Bumped whenever the partial file is cut back to 0, so a sync that was running for the
    /// old contents does not report them as a checkpoint of the new ones.
    let generation = Atomic<Int>(0)
    private(set) var lastCheckpointOffset: Int64
    /// The bytes in the file at the last checkpoint, counting ranges past the offset (`SegmentPlan`).
    private var lastCheckpointProgress: Int64
    private var lastCheckpointTime: UInt64
    private var rateSampleTime: UInt64
    private var rateSampleOffset: Int64
    /// The largest delegate-queue backlog seen during the current segment.
    private var segmentPeakBacklog = 0
    private let blocks: ChunkBlockPool
    /// Received bytes not yet written to the file.
    private var block: ChunkBlock
    /// The first failed write: the file's end is then unknown, so nothing more is written and only
    /// the last checkpoint counts.
    private var writeFailure: FileIOError?

    init(file: PartialFile, offset: Int64, digest: FileDigest, blocks: ChunkBlockPool = .shared) {
        self.file = file
        self.digest = StreamingDigest(digest)
        self.blocks = blocks
        blocks.join()
        self.block = blocks.take()
        self.progress = Atomic(offset)
        self.lastCheckpointOffset = offset
        self.lastCheckpointProgress = offset
        let now = MonotonicClock.nanoseconds()
        self.lastCheckpointTime = now
        self.rateSampleTime = now
        self.rateSampleOffset = offset
    }

    deinit {
        blocks.give(block)
        blocks.leave()
    }

    /// Appends `data` to the partial file: gathers it in the block, which is written and hashed
    /// when full.
    func write(_ data: Data) throws(FileIOError) {
        var failure: FileIOError?
        data.withUnsafeBytes { raw in
            var taken = 0
            while taken < raw.count {
                taken += block.append(UnsafeRawBufferPointer(rebasing: raw[taken...]))
                guard block.isFull else { continue }
                do throws(FileIOError) {
                    try flush()
                } catch {
                    failure = error
                    return
                }
            }
        }
        if let failure { throw failure }
    }

    /// Writes the gathered bytes to the file and hands them to the digest.
    func flush() throws(FileIOError) {
        if let writeFailure { throw writeFailure }
        guard !block.isEmpty else { return }
        do throws(FileIOError) {
            try FileIO.writeAll(file.fd, block.bytes, path: file.path)
        } catch {
            writeFailure = error
            throw error
        }
        let pool = blocks
        digest.feed(block) { pool.give($0) }
        block = blocks.take()
    }

    /// Records that the file now holds `offset` bytes (with those other connections fetched past
    /// the attempt's offset); samples the rate once a second. Returns
    /// whether a checkpoint is due: every half of `checkpointBytes`, so that while one syncs the
    /// bytes not yet durable stay within `checkpointBytes` (what a crash may cost), or after
    /// `intervalNanoseconds`.
    func advanced(to offset: Int64, now: UInt64, checkpointBytes: Int64, intervalNanoseconds: UInt64) -> Bool {
        progress.store(offset, ordering: .relaxed)
        if now &- rateSampleTime >= 1_000_000_000 {
            let elapsed = Double(now &- rateSampleTime) / 1e9
            rate.store(Int64(Double(offset - rateSampleOffset) / elapsed), ordering: .relaxed)
            rateSampleTime = now
            rateSampleOffset = offset
        }
        return offset - lastCheckpointProgress >= checkpointBytes / 2 || now &- lastCheckpointTime >= intervalNanoseconds
    }

    /// Cuts the partial file back to 0 and starts a new generation and new digests.
    func startOver() throws(FileIOError) {
        block.empty()
        try file.truncate(to: 0)
        writeFailure = nil
        generation.add(1, ordering: .sequentiallyConsistent)
        progress.store(0, ordering: .relaxed)
        lastCheckpointOffset = 0
        lastCheckpointProgress = 0
        rateSampleOffset = 0
        digest.reset(to: FileDigest())
    }

    /// Hashes with SHA-512 too from now on, when nothing has been hashed without it.
    func hashSHA512() {
        if digest.current().sha512 == nil { digest.reset(to: FileDigest(withSHA512: true)) }
    }

    /// Writes the gathered bytes, syncs the partial file on `queue`, then calls `synced` with the
    /// offset now durable, unless a sync is running already.
    @discardableResult
    func checkpoint(
        offset: Int64, progress: Int64? = nil, now: UInt64, on queue: DispatchQueue, logger: Logger,
        synced: @escaping @Sendable (Int64, Int) -> Void
    ) throws(FileIOError) -> Bool {
        guard !checkpointInFlight.load(ordering: .acquiring) else { return false }
        try flush()
        checkpointInFlight.store(true, ordering: .releasing)
        lastCheckpointOffset = offset
        lastCheckpointProgress = progress ?? offset
        lastCheckpointTime = now
        let file = file
        let generation = generation.load(ordering: .sequentiallyConsistent)
        queue.async {
            if Glibc.fdatasync(file.fd) == 0 {
                synced(offset, generation)
            } else {
                logger.warning("cannot sync a partial file", metadata: ["error": "\(FileIOError("fdatasync", file.path))"])
            }
            self.checkpointInFlight.store(false, ordering: .releasing)
        }
        return true
    }

    /// Writes the gathered bytes and syncs the partial file now; returns the bytes durable:
    /// `offset`, or the last checkpoint when the write or the sync fails.
    func syncNow(offset: Int64) -> (kept: Int64, synced: Bool) {
        do throws(FileIOError) {
            try flush()
        } catch {
            return (lastCheckpointOffset, false)
        }
        return Glibc.fdatasync(file.fd) == 0 ? (offset, true) : (lastCheckpointOffset, false)
    }

    /// Notes the backlog and returns it. Read on every chunk: a chunk can be a whole socket read
    /// (up to 256 KiB, `curl_coalesce.c`), so skipping chunks would let a transfer pass its high
    /// mark by megabytes before it is held. (Reading it walks the operations waiting on the
    /// delegate queue, a few dozen at most below the high mark.)
    func sampleBacklog(delegateBacklog: () -> Int) -> Int {
        let backlog = delegateBacklog() + digest.pending
        if backlog > segmentPeakBacklog { segmentPeakBacklog = backlog }
        return backlog
    }

    /// A new segment begins.
    func segmentStarted() {
        segmentPeakBacklog = 0
    }

    /// The next segment's size: doubled while the disk kept up with the network, halved when
    /// chunks piled up.
    func nextSegmentBytes(after current: Int64, bounds: ClosedRange<Int64>, highWater: Int) -> Int64 {
        if segmentPeakBacklog < highWater / 4 { return min(current * 2, bounds.upperBound) }
        if segmentPeakBacklog > highWater { return max(current / 2, bounds.lowerBound) }
        return current
    }

    // MARK: - Ranges other connections fetched

    /// Reads up to a block of the file's bytes at `offset..<end` (written there by another
    /// connection) and hands them to the digest after everything before; returns how many.
    func absorb(from offset: Int64, upTo end: Int64) throws(FileIOError) -> Int64 {
        try flush()
        let block = blocks.take()
        let want = Int(min(Int64(blocks.blockBytes), end - offset))
        let read = block.fill(from: file.fd, at: offset, count: want)
        guard read > 0 else {
            blocks.give(block)
            // A file shorter than what was written to it: cut by someone else.
            throw read == 0 ? FileIOError("read", file.path, errno: EIO) : FileIOError("read", file.path)
        }
        let pool = blocks
        digest.feed(block) { pool.give($0) }
        return Int64(read)
    }

    /// Bytes waiting to be hashed, in 16 KiB units.
    var digestBacklog: Int { digest.pending }
}
