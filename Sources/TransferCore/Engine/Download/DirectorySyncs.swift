import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One directory's syncs as landings ask for them. A landing asks once its file is synced and
/// moved into place; when no sync of the directory runs, its own begins at once; when one runs,
/// it joins the next round, which begins as soon as the running one ends and serves everyone who
/// asked meanwhile. So the landings of one moment share one directory `fsync`, and none is told
/// its rename is durable by a sync that began before the rename.
///
/// Pure: `DirectorySyncs` performs the syncs and tells the waiters.
struct DirectorySyncRounds<Waiter> {
    /// Whether a sync of the directory runs now.
    private(set) var syncing = false
    /// Who waits for the round after the running one.
    private(set) var next: [Waiter] = []

    /// `waiter`'s rename is done: the round to begin now (`waiter` alone), or nil when a sync runs
    /// and `waiter` waits for the next round.
    mutating func ask(_ waiter: Waiter) -> [Waiter]? {
        guard syncing else {
            syncing = true
            return [waiter]
        }
        next.append(waiter)
        return nil
    }

    /// The running sync ended (its waiters are told by the caller): the round to begin now, with
    /// everyone who asked while it ran, or nil when nobody did.
    mutating func ended() -> [Waiter]? {
        guard !next.isEmpty else {
            syncing = false
            return nil
        }
        defer { next = [] }
        return next
    }
}

/// The directory syncs of landings, shared within a directory as `DirectorySyncRounds` decides.
/// A round's sync runs on the thread of the landing that began it, and the next round right after
/// on the same thread: no thread waits for another, and each waiter is told once, after a sync
/// that began after its rename. A failed sync fails every landing of its round.
final class DirectorySyncs: Sendable {
    /// A landing waiting for its directory's sync, and what to do once it ended.
    struct Waiter: Sendable {
        let directory: DirectoryHandle
        let done: @Sendable (Result<Void, FileIOError>) -> Void
    }

    /// A directory, whatever descriptor or path it was opened by.
    private struct Key: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    /// The directories with a sync running, by identity; an idle one has no entry.
    private let rounds = Mutex<[Key: DirectorySyncRounds<Waiter>]>([:])
    private let syncDirectory: @Sendable (DirectoryHandle) throws(FileIOError) -> Void

    /// `sync` is how a directory is synced (tests count or fail it).
    init(sync: @escaping @Sendable (DirectoryHandle) throws(FileIOError) -> Void = { directory throws(FileIOError) in try directory.sync() }) {
        self.syncDirectory = sync
    }

    /// Makes the renames done in `directory` so far durable, then calls `done`: on this thread,
    /// or on the thread of the sync running now, once the round after it has synced.
    func sync(_ directory: DirectoryHandle, then done: @escaping @Sendable (Result<Void, FileIOError>) -> Void) {
        let waiter = Waiter(directory: directory, done: done)
        guard let info = try? directory.status() else {
            // Its identity unknown, it cannot share: it syncs alone.
            run([waiter])
            return
        }
        let key = Key(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        var round = rounds.withLock { $0[key, default: DirectorySyncRounds()].ask(waiter) }
        while let waiters = round {
            run(waiters)
            round = rounds.withLock { rounds in
                let next = rounds[key]?.ended()
                if next == nil { rounds[key] = nil }
                return next
            }
        }
    }

    /// One round: one sync, then every waiter of the round is told how it went.
    private func run(_ waiters: [Waiter]) {
        guard let first = waiters.first else { return }
        let result: Result<Void, FileIOError>
        do throws(FileIOError) {
            try syncDirectory(first.directory)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        for waiter in waiters { waiter.done(result) }
    }
}
