#if canImport(Glibc)
import Glibc
#endif

/// An open directory that a download lands in. Every later step (creating the partial file,
/// landing it, syncing, removing) works relative to it, so a path changed meanwhile (a symbolic
/// link swapped in for a directory) cannot send the bytes elsewhere.
final class DirectoryHandle: Sendable {
    let fd: Int32
    /// The path it was opened at, for messages.
    let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    /// The entry `name` itself (a symbolic link is not followed); nil when there is none.
    func status(of name: String) -> stat? {
        var info = stat()
        guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        return info
    }

    /// The directory's own owner, group and mode.
    func status() throws(FileIOError) -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileIOError("stat", path) }
        return info
    }

    /// Makes a creation or rename inside the directory durable.
    func sync() throws(FileIOError) {
        guard fsync(fd) == 0 else { throw FileIOError("fsync", path) }
    }

    /// Removes the entry `name` (never what a symbolic link there points to); false when it could not.
    @discardableResult
    func remove(_ name: String) -> Bool {
        unlinkat(fd, name, 0) == 0
    }

    /// Bytes an unprivileged user may still write on the directory's filesystem; nil when unknown.
    func availableBytes() -> Int64? {
        var info = statvfs()
        guard fstatvfs(fd, &info) == 0 else { return nil }
        return FileIO.availableBytes(info)
    }

    /// `path` joined with `name`, for messages.
    func pathOf(_ name: String) -> String { (path == "/" ? "" : path) + "/" + name }
}
