import Crypto
import Foundation
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The copies of files to upload, in `<state directory>/spool` (0700, the daemon's): each under
/// an unguessable name, mode 0600, synced before it is handed out. Every attempt of an upload
/// reads its copy, so a source changed or deleted after submit changes nothing. The bytes spooled
/// count against a quota per user and in all; a finished, cancelled or failed upload frees its copy.
public final class Spool: Sendable {
    /// The most bytes the spool holds for one user and for everyone.
    public struct Quota: Sendable, Equatable {
        public var perUser: Int64
        public var total: Int64
        /// Bytes always left free on the spool's filesystem (`disk_reserve_bytes`): the journal
        /// lives there, and a full disk under the journal stops the daemon.
        public var diskReserve: Int64
        /// Files one user may hold in the spool (`upload_spool_files_per_user`): each takes an
        /// inode, whatever its size.
        public var filesPerUser = Int.max
        public init(perUser: Int64, total: Int64, diskReserve: Int64 = 0) {
            self.perUser = perUser
            self.total = total
            self.diskReserve = diskReserve
        }
    }

    /// A synced copy.
    public struct Entry: Sendable, Equatable {
        /// The copy's name in the spool, which the submit names.
        public var name: String
        public var owner: UInt32
        public var size: Int64
        /// Lowercase hex.
        public var sha256: String
        /// Whether a job holds it (unclaimed copies are dropped after `unclaimedLifetime`).
        var claimed: Bool
        var createdAt: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var quota: Quota
        func used(by owner: UInt32?) -> Int64 {
            entries.values.filter { owner == nil || $0.owner == owner }.reduce(0) { $0 + $1.size }
        }
    }

    public let directory: String
    private let state: Mutex<State>
    /// A hand-off whose submit never came (the client died in between) is freed after this.
    static let unclaimedLifetime: UInt64 = 15 * 60 * 1_000_000_000

    /// Opens (creating it, 0700) the spool directory.
    public init(directory: String, quota: Quota) throws(CoreError) {
        self.directory = directory
        state = Mutex(State(quota: quota))
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            throw CoreError(.internalFailure, "cannot create the upload spool \(directory): \(String(cString: strerror(errno))); check the state directory")
        }
        chmod(directory, 0o700)
    }

    public func setQuota(_ quota: Quota) {
        state.withLock { $0.quota = quota }
    }

    public func path(of name: String) -> String { directory + "/" + name }

    // MARK: - Taking files in

    /// Opens `path` with the daemon's own rights and spools it: for the daemon's own user only.
    public func ingest(path: String, owner: UInt32) throws(CoreError) -> Entry {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            throw CoreError(.invalidParameter("source"), "cannot open \(path) to upload it: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return try ingest(descriptor: fd, named: path, owner: owner)
    }

    /// Copies the regular file open as `fd` into the spool for `owner`, digests and syncs the
    /// copy, and returns it. Refused when the quota cannot hold it; nothing is kept then.
    public func ingest(descriptor fd: Int32, named name: String, owner: UInt32) throws(CoreError) -> Entry {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw CoreError(.invalidParameter("source"), "cannot read \(name): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CoreError(.invalidParameter("source"), "\(name) is not a regular file: only regular files can be uploaded (copy a pipe or device to a file first)")
        }
        let size = Int64(info.st_size)
        return try write(size, for: owner, named: name) { out, path throws(SpoolCopy.Failure) in
            try SpoolCopy.copyAndDigest(from: fd, named: name, size: size, to: out, path: path)
        }
    }

    /// Makes a new spool file of `size` bytes for `owner`, counted against the quota first, which
    /// `fill` writes (open for writing, and its path) and digests; then syncs and returns it. On a
    /// failure nothing is kept, and the message names `name` (the file as the submitter knows it).
    func write(
        _ size: Int64, for owner: UInt32, named name: String, fill: (Int32, String) throws(SpoolCopy.Failure) -> SHA256.Digest
    ) throws(CoreError) -> Entry {
        let entryName = Self.newName()
        try reserve(entryName, owner: owner, size: size)
        let path = self.path(of: entryName)
        do throws(SpoolCopy.Failure) {
            let out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard out >= 0 else {
                throw SpoolCopy.Failure(message: "cannot create \(path): \(String(cString: strerror(errno)))", spoolSide: true)
            }
            defer { close(out) }
            let digest = try fill(out, path)
            guard fsync(out) == 0 else { throw SpoolCopy.Failure(message: "cannot sync \(path): \(String(cString: strerror(errno)))", spoolSide: true) }
            do throws(FileIOError) { try FileIO.syncDirectory(directory) } catch {
                throw SpoolCopy.Failure(message: "cannot sync the spool directory: \(error)", spoolSide: true)
            }
            let hex = FileDigest.hex(digest)
            return state.withLock { state in
                state.entries[entryName]?.sha256 = hex
                return state.entries[entryName] ?? Entry(name: entryName, owner: owner, size: size, sha256: hex, claimed: false, createdAt: 0)
            }
        } catch {
            release(entryName)
            if error.spoolSide {
                throw CoreError(.internalFailure, "\(error.message); \(name) was not accepted")
            }
            throw CoreError(.invalidParameter("source"), error.message)
        }
    }

    /// Counts `size` bytes for `owner` before they are copied, so that concurrent hand-offs
    /// cannot overrun the quota together; expired unclaimed copies are freed first.
    private func reserve(_ name: String, owner: UInt32, size: Int64) throws(CoreError) {
        let now = MonotonicClock.nanoseconds()
        var info = statvfs()
        let known = statvfs(directory, &info) == 0
        let free = known ? FileIO.availableBytes(info) : nil
        // The journal's filesystem: the last inodes stay for its compaction (none reported: no limit).
        let inodesLeft = known && info.f_files > 0 ? Int64(clamping: UInt64(info.f_favail)) : Int64.max
        let (expired, refusal): ([String], CoreError?) = state.withLock { state in
            let expired = state.entries.values.filter { !$0.claimed && now &- $0.createdAt > Self.unclaimedLifetime }.map(\.name)
            for name in expired { state.entries[name] = nil }
            let mine = state.used(by: owner)
            let all = state.used(by: nil)
            let human = ByteCountFormatting.string
            let files = state.entries.values.reduce(0) { $0 + ($1.owner == owner ? 1 : 0) }
            if files >= state.quota.filesPerUser {
                return (expired, CoreError(
                    .limitReached("upload_spool_files_per_user"),
                    "the upload spool holds \(files) files for you, the most one user may have (upload_spool_files_per_user): "
                        + "submit or cancel the uploads waiting, or wait for some to finish, then hand the file over again"))
            }
            if inodesLeft <= Journal.inodeReserve {
                return (expired, CoreError(
                    .insufficientSpace,
                    "the upload spool's filesystem has \(max(0, inodesLeft)) free inodes (files) left, the last ones kept for the journal: "
                        + "remove files there, then hand the file over again"))
            }
            if mine + size > state.quota.perUser {
                return (expired, CoreError(
                    .limitReached("upload_spool_bytes_per_user"),
                    "the upload spool cannot take \(human(size)) more for you: your uploads waiting to be sent hold \(human(mine)) "
                        + "of the \(human(state.quota.perUser)) one user may have spooled (upload_spool_bytes_per_user); "
                        + "wait for some to finish or cancel some, or ask the administrator to raise the limit"))
            }
            if all + size > state.quota.total {
                return (expired, CoreError(
                    .limitReached("upload_spool_bytes_total"),
                    "the upload spool cannot take \(human(size)) more: uploads waiting to be sent hold \(human(all)) "
                        + "of the \(human(state.quota.total)) it may hold in all (upload_spool_bytes_total); try again later, "
                        + "or ask the administrator to raise the limit"))
            }
            if let free, free - state.quota.diskReserve < size {
                return (expired, CoreError(
                    .insufficientSpace,
                    "the upload spool's filesystem has \(human(max(0, free))) free, and \(human(state.quota.diskReserve)) of it stays free "
                        + "(disk_reserve_bytes): a copy of \(human(size)) does not fit; free some space there and hand the file over again"))
            }
            state.entries[name] = Entry(name: name, owner: owner, size: size, sha256: "", claimed: false, createdAt: now)
            return (expired, nil)
        }
        for name in expired { unlink(path(of: name)) }
        if let refusal { throw refusal }
    }

    // MARK: - Jobs and their copies

    /// The copy `name` for a submit of `owner`: refused when it is unknown, another user's, or
    /// already held by a job (a name is good for one submit).
    func claim(_ name: String, owner: UInt32) throws(CoreError) -> Entry {
        let entry: Entry? = state.withLock { state in
            guard var entry = state.entries[name], entry.owner == owner, !entry.claimed, !entry.sha256.isEmpty else { return nil }
            entry.claimed = true
            state.entries[name] = entry
            return entry
        }
        guard let entry else { throw Self.notAwaitingSubmit(name) }
        return entry
    }

    /// Why a submit naming `name` is refused when no copy of the caller's by that name awaits one.
    public static func notAwaitingSubmit(_ name: String) -> CoreError {
        CoreError(
            .invalidParameter("spool"),
            "spool '\(name.prefix(80))' names no file handed to transferd by you that awaits a submit: hand the file over again "
                + "(transferctl upload does), then submit with the name it answered")
    }

    /// `owner`'s copy `name`, handed over and not yet submitted; nil if there is none.
    public func entry(_ name: String, owner: UInt32) -> Entry? {
        state.withLock { state in
            state.entries[name].flatMap { $0.owner == owner && !$0.claimed && !$0.sha256.isEmpty ? $0 : nil }
        }
    }

    /// Gives a claimed copy back, unclaimed (a submit that was refused after claiming it).
    func unclaim(_ name: String) {
        state.withLock { $0.entries[name]?.claimed = false }
    }

    /// Frees an unclaimed copy of `owner`'s; another user's, or one a job holds, stays.
    func discard(_ name: String, owner: UInt32) {
        let mine = state.withLock { state in
            guard let entry = state.entries[name], entry.owner == owner, !entry.claimed else { return false }
            state.entries[name] = nil
            return true
        }
        if mine { unlink(path(of: name)) }
    }

    /// Frees a copy.
    public func release(_ name: String) {
        let known = state.withLock { $0.entries.removeValue(forKey: name) != nil }
        if known || Self.isValidName(name) { unlink(path(of: name)) }
    }

    /// At start-up: keeps the copies that unfinished uploads hold (counted against the quota)
    /// and removes every other file in the spool (hand-offs never submitted, copies whose job's
    /// end was saved but not yet freed when the daemon stopped, or came while it was down).
    func recover(holding jobs: [(name: String, owner: UInt32, size: Int64, sha256: String)]) -> [String] {
        let held = Set(jobs.map(\.name))
        var removed: [String] = []
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) {
            for name in entries where !held.contains(name) {
                unlink(path(of: name))
                removed.append(name)
            }
        }
        state.withLock { state in
            for job in jobs {
                state.entries[job.name] = Entry(name: job.name, owner: job.owner, size: job.size, sha256: job.sha256, claimed: true, createdAt: 0)
            }
        }
        return removed
    }

    /// Bytes held for `owner`, or for everyone.
    public func bytesHeld(by owner: UInt32? = nil) -> Int64 {
        state.withLock { $0.used(by: owner) }
    }

    /// 128 random bits in hex: nobody guesses another's copy.
    static func newName() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }

    static func isValidName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
    }
}
