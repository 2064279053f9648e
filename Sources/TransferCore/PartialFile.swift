#if canImport(Glibc)
import Glibc
#endif

/// The open partial file of a download. Closed when the last user (the transfer or a pending
/// checkpoint sync) lets go of it, so a sync never runs on a closed or reused descriptor.
final class PartialFile: Sendable {
    let fd: Int32
    let path: String
    let inode: UInt64

    private init(fd: Int32, path: String, inode: UInt64) {
        self.fd = fd
        self.path = path
        self.inode = inode
    }

    deinit { close(fd) }

    /// Opens (creating, mode 0600) the partial file, without following a symlink at its place,
    /// and cuts it to `keeping` bytes, or to 0 when it is shorter than that.
    /// Returns the file and the offset the transfer continues from.
    static func open(path: String, keeping: Int64) throws(FileIOError) -> (PartialFile, Int64) {
        var fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw FileIOError("open", path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let error = FileIOError("stat", path)
            close(fd)
            throw error
        }
        if info.st_uid != geteuid() {
            // Someone else put a file at the partial name (which they may still read or write
            // through): never continue into it; start a file of our own.
            close(fd)
            guard unlink(path) == 0 || errno == ENOENT else { throw FileIOError("unlink", path) }
            fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw FileIOError("open", path) }
            guard fstat(fd, &info) == 0 else {
                let error = FileIOError("stat", path)
                close(fd)
                throw error
            }
        } else if info.st_mode & 0o077 != 0 {
            fchmod(fd, 0o600)
        }
        let file = PartialFile(fd: fd, path: path, inode: UInt64(info.st_ino))
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw FileIOError("open", path, errno: EINVAL) }
        let offset = Int64(info.st_size) >= keeping ? keeping : 0
        try file.truncate(to: offset)
        return (file, offset)
    }

    /// Cuts the file to `length` bytes and positions writes there.
    func truncate(to length: Int64) throws(FileIOError) {
        guard ftruncate(fd, off_t(length)) == 0 else { throw FileIOError("truncate", path) }
        guard lseek(fd, off_t(length), SEEK_SET) == off_t(length) else { throw FileIOError("seek", path) }
    }
}
