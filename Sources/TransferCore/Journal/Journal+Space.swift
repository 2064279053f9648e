import Foundation
import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// A full disk under the journal (design rule 4): a write refused for space cuts the file back to
/// its last complete record and keeps the records in memory, to be written when space is back;
/// the writers waiting for them are told `.noSpace`, nothing is acknowledged, the daemon keeps
/// serving. Free space is checked before new work is accepted, with a reserve, so that this rarely
/// happens.
extension Journal {
    /// How long records kept in memory wait before the journal tries to write them again, unless
    /// a writer waits for them sooner.
    static let spaceRetryNanoseconds: UInt64 = 2_000_000_000
    /// How long a compaction refused for space waits before the next try.
    static let compactionRetryNanoseconds: UInt64 = 30_000_000_000

    /// Whether records wait in memory because the last write was refused for space.
    public var isShortOfSpace: Bool { state.withLock { $0.shortOfSpace != nil } }

    /// Runs on `queue` after `error` refused a write of `changes`: cuts the file back to `offset`
    /// (where the batch began), keeps the changes queued, and fails `waiters` with `.noSpace`.
    /// Returns whether the drain should go on (writers arrived meanwhile and wait for an answer).
    func writeRefusedForSpace(
        _ error: FileIOError, changes: [Change], waiters: [CheckedContinuation<Void, any Error>], cutBackTo offset: Int, fd: Int32
    ) -> Bool {
        // The part of the batch that reached the file goes: the file ends with its last synced record.
        do throws(FileIOError) {
            guard ftruncate(fd, off_t(offset)) == 0 else { throw FileIOError("ftruncate", path) }
            try FileIO.fdatasync(fd, path: path)
        } catch let cut {
            fail(
                JournalError(code: .io, message: "journal write failed (\(error)) and the journal could not be cut back to its last complete record: \(cut)"),
                waiters: waiters)
            return false
        }
        let refusal = JournalError(
            code: .noSpace,
            message: "the state directory's filesystem (\(directory)) has no room left for the journal (\(String(cString: strerror(error.errno)))); "
                + "nothing of this request was saved: free space there (transferctl clean removes finished jobs), then try again")
        let now = MonotonicClock.nanoseconds()
        let (goOn, first, arm) = state.withLock { state in
            state.pending = Self.coalesce(changes + state.pending)
            state.writing = []
            let first = state.shortOfSpace == nil
            state.shortOfSpace = refusal
            state.retryWritesAt = now &+ Self.spaceRetryNanoseconds
            state.statistics.spaceRefusals += 1
            let arm = !state.retryArmed
            state.retryArmed = true
            if state.waiters.isEmpty {
                state.drainScheduled = false
                return (false, first, arm)
            }
            return (true, first, arm)
        }
        if first {
            logger.error(
                "journal write refused for space: new work is refused until space is back; the records wait in memory",
                metadata: ["error": "\(error)", "records": "\(changes.count)"])
        }
        waiters.forEach { $0.resume(throwing: refusal) }
        if arm { armSpaceRetry() }
        return goOn
    }

    /// Tries the kept records again after `spaceRetryNanoseconds`, and again after that while the
    /// disk stays full. A time, not a wake-up: nothing announces that space came back, and writing
    /// is how to find out. One try per refusal: only a write refused again arms the next, so
    /// nothing looks at the disk while the records do not wait.
    private func armSpaceRetry() {
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(Self.spaceRetryNanoseconds))) {
            let waiting = self.state.withLock { state in
                state.retryArmed = false
                // Due now, whatever a later refusal set.
                state.retryWritesAt = 0
                return state.shortOfSpace != nil && !state.pending.isEmpty
            }
            if waiting { self.drain() }
        }
    }

    /// Runs on `queue` when a compaction was refused for space: the old journal is intact and
    /// stays; compaction is tried again later.
    func compactionRefusedForSpace(_ error: JournalError) {
        unlink(path + ".compact")
        state.withLock { $0.compactAfter = MonotonicClock.nanoseconds() &+ Self.compactionRetryNanoseconds }
        logger.warning("journal compaction refused for space; the journal is kept as it is and compaction is tried again later",
            metadata: ["error": "\(error.message)"])
    }

    /// The latest change of each key, in the order of those changes: what replaying `changes` leaves.
    static func coalesce(_ changes: [Change]) -> [Change] {
        var seen = Set<String>()
        var kept: [Change] = []
        for change in changes.reversed() {
            let key: String
            switch change {
            case .put(let name, _), .delete(let name): key = name
            }
            if seen.insert(key).inserted { kept.append(change) }
        }
        return kept.reversed()
    }

    /// Takes back the queued changes of `keys` whose writers were told they were not saved (a
    /// refused submit): a key the file holds is deleted instead, so that what the caller forgot
    /// does not come back after a restart.
    public func withdraw(keys: Set<String>) {
        guard !keys.isEmpty else { return }
        let deletes: [Change] = state.withLock { state in
            state.pending.removeAll { change in
                if case .put(let key, _) = change { return keys.contains(key) }
                return false
            }
            return keys.filter { key in
                state.index[IndexKey(key)] != nil
                    || state.writing.contains { if case .put(key, _) = $0 { return true } else { return false } }
            }.map { .delete(key: $0) }
        }
        if !deletes.isEmpty { write(deletes) }
    }

    /// Why the journal's filesystem should not take `bytes` more of new work: fewer than `reserve`
    /// bytes (at most a tenth of the filesystem, so a small state directory still works) or a few
    /// inodes would stay free. Nil when it fits or is unknown. Records kept in memory after a
    /// refused write do not refuse by themselves: once space is back, the next submit writes them.
    public func spaceRefusal(adding bytes: Int, reserve: Int64) -> String? {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        let free = FileIO.availableBytes(info)
        let size = Int64(clamping: UInt64(info.f_blocks)).multipliedReportingOverflow(by: Int64(info.f_frsize))
        let kept = min(reserve, size.overflow ? reserve : size.partialValue / 10)
        let human = ByteCountFormatting.string
        if free - kept < Int64(bytes) {
            return "the state directory's filesystem (\(directory)) has \(human(max(0, free))) free, and \(human(kept)) of it stays free "
                + "for the jobs already accepted (disk_reserve_bytes, at most a tenth of the filesystem): no new work is accepted "
                + "until space is freed there (transferctl clean removes finished jobs)"
        }
        // Some filesystems report no inode count (btrfs): nothing to check there.
        if info.f_files > 0 {
            let keptInodes = min(Self.inodeReserve, Int64(clamping: UInt64(info.f_files)) / 10)
            if Int64(clamping: UInt64(info.f_favail)) <= keptInodes {
                return "the state directory's filesystem (\(directory)) has \(info.f_favail) free inodes (files) left, the last ones "
                    + "kept for the jobs already accepted: no new work is accepted until files are removed there"
            }
        }
        return nil
    }

    /// Inodes kept free on the journal's filesystem for compaction, torn-tail copies and spool files.
    static let inodeReserve: Int64 = 64
}
