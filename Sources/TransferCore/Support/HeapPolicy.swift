import CLinuxShims
import Synchronization

/// Keeps the daemon's heap near what it uses. Received chunks are allocated by libcurl's thread
/// and freed on the delegate queue's; with glibc's default of up to eight arenas per core, each
/// thread that allocates gets its own arena and keeps what was freed there, so a large download
/// left the daemon with far more resident memory than it ever held at once.
public enum HeapPolicy {
    /// Limits malloc to two arenas. Call once at start.
    public static func limitArenas() {
        _ = clinuxshims_limit_malloc_arenas(2)
    }

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
