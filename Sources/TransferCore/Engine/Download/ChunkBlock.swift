import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A block of memory that received chunks are gathered in before they are written and hashed:
/// FoundationNetworking hands bodies over in chunks of at most 256 KiB, and a `write` plus a
/// digest hand-off per chunk cost more CPU than the bytes themselves (measured in the commit
/// that brought this in). A block is page-aligned, so a full one covers whole pages of the file
/// when the transfer began at a page boundary and the kernel need not fill partial pages. Blocks
/// are mapped pages of their own, not heap: a freed block goes back to the kernel at once instead
/// of staying in a malloc arena between the chunks FoundationNetworking allocates there.
///
/// `@unchecked Sendable`: a block has one owner at a time — the sink while it fills it, then the
/// digest's queue until it has hashed it and gives it back to its pool.
final class ChunkBlock: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer
    private let mapped: Bool
    private(set) var count = 0

    init(capacity: Int) {
        let pages = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if let pages, pages != MAP_FAILED {
            storage = UnsafeMutableRawBufferPointer(start: pages, count: capacity)
            mapped = true
        } else {
            // Out of address space for a mapping: the heap may still have room.
            storage = .allocate(byteCount: capacity, alignment: 4096)
            mapped = false
        }
    }

    deinit {
        if mapped {
            munmap(storage.baseAddress, storage.count)
        } else {
            storage.deallocate()
        }
    }

    var capacity: Int { storage.count }
    var isFull: Bool { count == storage.count }
    var isEmpty: Bool { count == 0 }

    /// The bytes gathered so far.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }

    /// Copies as much of `source` as fits and returns how many bytes that was.
    func append(_ source: UnsafeRawBufferPointer) -> Int {
        let n = min(storage.count - count, source.count)
        guard n > 0, let target = storage.baseAddress, let from = source.baseAddress else { return 0 }
        (target + count).copyMemory(from: from, byteCount: n)
        count += n
        return n
    }

    /// Reads up to `count` bytes (at most the capacity) of `fd` at `offset` into the empty block;
    /// returns how many, 0 at the file's end, -1 on an error (errno says which).
    func fill(from fd: Int32, at offset: Int64, count wanted: Int) -> Int {
        let want = min(wanted, storage.count)
        while true {
            let n = pread(fd, storage.baseAddress, want, off_t(offset))
            if n < 0, errno == EINTR { continue }
            count = max(n, 0)
            return n
        }
    }

    /// Forgets the bytes gathered, keeping the memory.
    func empty() {
        count = 0
    }
}

/// The blocks of one transfer: the one being filled and those the digest has not yet hashed come
/// from here, and hashed ones go back, so a running transfer allocates its blocks once. Freed with
/// the transfer.
final class ChunkBlockPool: Sendable {
    let blockBytes: Int
    private let idle = Mutex<[ChunkBlock]>([])

    init(blockBytes: Int) {
        self.blockBytes = blockBytes
    }

    /// An empty block: a recycled one when there is one.
    func take() -> ChunkBlock {
        idle.withLock { $0.popLast() } ?? ChunkBlock(capacity: blockBytes)
    }

    /// Gives a block back for reuse; at most two are kept idle.
    func give(_ block: ChunkBlock) {
        block.empty()
        idle.withLock { blocks in
            if blocks.count < 2 { blocks.append(block) }
        }
    }
}
