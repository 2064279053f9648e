import CLinuxShims
import Synchronization

/// Keeps the daemon's heap near what it uses. Received chunks are allocated by libcurl's thread
/// and freed on the delegate queue's; with glibc's default of up to eight arenas per core, each
/// thread that allocates gets its own arena and keeps what was freed there, so a large download
/// left the daemon with far more resident memory than it ever held at once.
public enum HeapPolicy {
    /// Limits malloc to two arenas, and keeps the blocks a download's chunks come and go in. Call
    /// once at start.
    ///
    /// FoundationNetworking copies every block of a response body (up to 256 KiB) into a new
    /// `Data`, freed once the block is written. glibc's defaults map blocks that size afresh, or give
    /// back the top of the heap whenever the delegate queue's backlog drains: for 1 GiB, about
    /// 115,000 page faults, each clearing a new page. With such blocks taken from the heap,
    /// and 2 MiB of free heap kept, there are 45,000-60,000 (with `ChunkBlockPool.shared`), and the
    /// daemon spends about a tenth less CPU on the download. Keeping 4 MiB saved a little more CPU
    /// but raised a download's peak `RssAnon` by up to 7 MiB. A finished transfer still trims the
    /// heap (`transferEnded`); the second arena may keep up to those 2 MiB at its top, which
    /// `malloc_trim` does not give back.
    ///
    /// A streamed upload's body is read in 1 MiB pieces (the upload buffer set in
    /// `curl_options.c`), each into a new buffer of that size: the threshold lies just above it,
    /// so that buffer too is reused from the heap instead of mapped for every piece.
    public static func configure() {
        _ = clinuxshims_limit_malloc_arenas(2)
        _ = clinuxshims_keep_heap_blocks(mmapThresholdBytes, 2 << 20, 2 << 20)
    }

    /// Allocations this large or larger are mapped on their own rather than taken from the heap.
    static let mmapThresholdBytes: Int32 = (1 << 20) + (64 << 10)

    /// Bytes after which a finished transfer returns freed heap to the kernel.
    static let trimAfterBytes: Int64 = 64 << 20

    /// Returns freed heap to the kernel soon when a transfer that moved `bytes` ends.
    static func transferEnded(bytes: Int64) {
        if bytes >= trimAfterBytes { HeapTrim.soon() }
    }

    /// Submitted jobs held light after which freed heap goes back to the kernel.
    static let trimAfterLightJobs = 1_000
    private static let heldLightSinceTrim = Atomic<Int>(0)

    /// Returns freed heap to the kernel once the submits pause, after `trimAfterLightJobs`
    /// submitted jobs were put down to their light form: their whole records, and what answering
    /// them took, were freed among what stays, and a script that hands over a million URLs would
    /// otherwise leave the daemon holding that space.
    static func heldLight(_ count: Int) {
        guard count > 0, heldLightSinceTrim.add(count, ordering: .relaxed).newValue >= trimAfterLightJobs else { return }
        heldLightSinceTrim.store(0, ordering: .relaxed)
        HeapTrim.whenQuiet()
    }
}
