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

/// The blocks downloads gather their chunks in: the one being filled and those the digest has not
/// yet hashed come from here, and hashed ones go back. One pool serves every download
/// (`shared`), so blocks pass from one transfer's request to the next and from transfer to
/// transfer instead of being mapped again: a fresh block costs a page fault and a cleared page
/// for each of its pages. At most `idleLimit` blocks wait idle while a download runs; when the
/// last one ends, the idle blocks go back to the kernel.
final class ChunkBlockPool: Sendable {
    /// The pool of the engine's downloads: blocks of 1 MiB, at most four idle. (Eight saved few more
    /// page faults for one download and added 4 MiB to its peak memory; with four downloads at
    /// once, keeping two more per download beyond the second changed neither faults nor memory.)
    static let shared = ChunkBlockPool(blockBytes: 1 << 20, idleLimit: 4)

    let blockBytes: Int
    let idleLimit: Int
    private struct State {
        var idle: [ChunkBlock] = []
        /// Sinks using the pool.
        var users = 0
    }
    private let state = Mutex(State())

    init(blockBytes: Int, idleLimit: Int = 2) {
        self.blockBytes = blockBytes
        self.idleLimit = idleLimit
    }

    /// Blocks waiting idle.
    var idleCount: Int { state.withLock { $0.idle.count } }

    /// A sink begins to use the pool.
    func join() {
        state.withLock { $0.users += 1 }
    }

    /// A sink is done with the pool; after the last one, the idle blocks are freed.
    func leave() {
        var freed: [ChunkBlock] = []
        state.withLock { state in
            state.users -= 1
            assert(state.users >= 0, "a sink left the block pool twice")
            if state.users <= 0 { swap(&freed, &state.idle) }
        }
        // The blocks are unmapped as `freed` goes, outside the lock.
    }

    /// An empty block: a recycled one when there is one.
    func take() -> ChunkBlock {
        state.withLock { $0.idle.popLast() } ?? ChunkBlock(capacity: blockBytes)
    }

    /// Gives a block back for reuse: kept while a sink uses the pool and fewer than `idleLimit`
    /// wait, else freed.
    func give(_ block: ChunkBlock) {
        block.empty()
        state.withLock { state in
            if state.users > 0, state.idle.count < idleLimit { state.idle.append(block) }
        }
    }
}
