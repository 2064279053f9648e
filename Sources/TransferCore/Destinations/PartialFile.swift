#if canImport(Glibc)
import Glibc
#endif

/// The open partial file of a download, inside the open directory it lands in. Closed when the
/// last user (the transfer or a pending checkpoint sync) lets go of it, so a sync never runs on a
/// closed or reused descriptor.
final class PartialFile: Sendable {
    let fd: Int32
    /// Where it is, for messages.
    let path: String
    let inode: UInt64
    let device: UInt64
    /// The directory it lives in, and its name there.
    let directory: DirectoryHandle
    let name: String

    private init(fd: Int32, directory: DirectoryHandle, name: String, info: stat) {
        self.fd = fd
        self.directory = directory
        self.name = name
        self.path = directory.pathOf(name)
        self.inode = UInt64(info.st_ino)
        self.device = UInt64(info.st_dev)
    }

    deinit { close(fd) }

    /// Why the partial file cannot be opened: a failed system call, or a file at its name that
    /// transferd did not make.
    enum OpenError: Error {
        case io(FileIOError)
        case foreign(DestinationError)
    }

    /// Opens the partial file `name` in `directory` and cuts it to `keeping` bytes, or to 0 when it
    /// is shorter than that. An existing file is taken only when it is a regular file, not linked
    /// elsewhere, and owned by the daemon's user or `owner`; a missing one is created (mode 0600,
    /// `O_EXCL`) and, when the daemon runs as root, given to `owner`. Nothing at that name is ever
    /// followed. Returns the file and the offset the transfer continues from. With `extent` (ranges
    /// kept past `keeping`), the file is cut to `extent` instead when it is at least that long,
    /// writes still positioned at the offset; `keptExtent` tells whether it was.
    static func open(
        in directory: DirectoryHandle, name: String, keeping: Int64, extent: Int64? = nil, owner: DownloadOwner?
    ) throws(OpenError) -> (file: PartialFile, offset: Int64, keptExtent: Bool) {
        let path = directory.pathOf(name)
        // Two rounds: a file created or removed by someone else between the look and the open.
        for _ in 0..<2 {
            if let existing = directory.status(of: name) {
                try checkOwnFile(existing, path: path, owner: owner)
                let fd = openat(directory.fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
                if fd < 0 {
                    if errno == ENOENT { continue }
                    throw .io(FileIOError("open", path))
                }
                let file: PartialFile
                do throws(FileIOError) {
                    file = try PartialFile(fd: fd, directory: directory, name: name)
                } catch {
                    throw .io(error)
                }
                // What was opened must be what was checked.
                guard file.inode == UInt64(existing.st_ino), file.device == UInt64(existing.st_dev) else { continue }
                var info = stat()
                guard fstat(fd, &info) == 0 else { throw .io(FileIOError("stat", path)) }
                let offset = Int64(info.st_size) >= keeping ? keeping : 0
                let keptExtent = offset == keeping && extent.map { $0 > keeping && Int64(info.st_size) >= $0 } == true
                // Private until it lands, whatever mode it was left with.
                if info.st_mode & 0o077 != 0 { fchmod(fd, 0o600) }
                do throws(FileIOError) {
                    // Made by this daemon before it wrote for other users (an older version, or another user).
                    if let owner, owner.receivesFiles, info.st_uid != owner.uid { try file.give(to: owner) }
                    if keptExtent, let extent {
                        try file.truncate(to: extent)
                        try file.position(at: offset)
                    } else {
                        try file.truncate(to: offset)
                    }
                } catch {
                    throw .io(error)
                }
                return (file, offset, keptExtent)
            }
            let fd = openat(directory.fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if fd < 0 {
                if errno == EEXIST { continue }
                throw .io(FileIOError("create", path))
            }
            do throws(FileIOError) {
                let file = try PartialFile(fd: fd, directory: directory, name: name)
                if let owner, owner.receivesFiles {
                    try file.give(to: owner)
                }
                return (file, 0, false)
            } catch {
                directory.remove(name)
                throw .io(error)
            }
        }
        throw .foreign(
            DestinationError(.foreignFile, "the partial file \(path) keeps being replaced while transferd opens it: find out what changes it, then submit the job again"))
    }

    private convenience init(fd: Int32, directory: DirectoryHandle, name: String) throws(FileIOError) {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = FileIOError("stat", directory.pathOf(name))
            close(fd)
            throw error
        }
        self.init(fd: fd, directory: directory, name: name, info: info)
    }

    /// Refuses a file at the partial file's name that transferd did not create: a link, a
    /// directory, a file with other names (a hard link to someone else's file), or one owned by
    /// a third user.
    private static func checkOwnFile(_ info: stat, path: String, owner: DownloadOwner?) throws(OpenError) {
        let owners: Set<UInt32> = [DownloadOwner.daemonUID, owner?.uid ?? DownloadOwner.daemonUID]
        let what: String?
        if (info.st_mode & S_IFMT) == S_IFLNK {
            what = "is a symbolic link"
        } else if (info.st_mode & S_IFMT) != S_IFREG {
            what = "is not a regular file"
        } else if info.st_nlink != 1 {
            what = "has other names (hard links)"
        } else if !owners.contains(info.st_uid) {
            what = "belongs to uid \(info.st_uid)"
        } else {
            what = nil
        }
        guard let what else { return }
        throw .foreign(
            DestinationError(
                .foreignFile,
                "the partial file \(path) \(what), so transferd did not make it and will not write to it: "
                    + "remove it, then submit the job again"))
    }

    /// Gives the file to the user it is downloaded for. The group is the submitting process's,
    /// unless the directory is set-group-ID, whose group the file has already taken.
    private func give(to owner: DownloadOwner) throws(FileIOError) {
        let inheritsGroup = ((try? directory.status())?.st_mode ?? 0) & S_ISGID != 0
        let gid = inheritsGroup ? gid_t.max : (owner.gid ?? UserAccount(uid: owner.uid)?.gid ?? gid_t.max)
        guard fchown(fd, owner.uid, gid) == 0 else { throw FileIOError("chown", path) }
    }

    /// Cuts the file to `length` bytes and positions writes there.
    func truncate(to length: Int64) throws(FileIOError) {
        guard ftruncate(fd, off_t(length)) == 0 else { throw FileIOError("truncate", path) }
        guard lseek(fd, off_t(length), SEEK_SET) == off_t(length) else { throw FileIOError("seek", path) }
    }

    /// Positions the next write at `offset`.
    func position(at offset: Int64) throws(FileIOError) {
        guard lseek(fd, off_t(offset), SEEK_SET) == off_t(offset) else { throw FileIOError("seek", path) }
    }

    /// Removes the partial file's name from its directory.
    func unlink() {
        // Only while the name is still this file: never remove what someone else put there.
        if isInPlace { directory.remove(name) }
    }

    /// Whether the partial file's name in its directory still refers to this file.
    var isInPlace: Bool {
        guard let current = directory.status(of: name) else { return false }
        return UInt64(current.st_ino) == inode && UInt64(current.st_dev) == device
    }

    /// Removes the partial file at `path` (a job's `partialPath`) when its directory is inside
    /// `roots`, walking there without following symbolic links. Best effort, like `unlink(2)`.
    static func remove(_ path: String, roots: AllowedRoots) {
        guard let location = try? DestinationPath.parse(path, roots: roots),
            let directory = try? DirectoryWalker.open(location, access: nil)
        else { return }
        directory.remove(location.name)
    }
}
