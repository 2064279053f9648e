import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Creates the missing directories between a destination's allowed root and its file, as
/// `mkdir -p` would (`transferctl submit --create-dirs`), with the rules of `DirectoryWalker`: down
/// from the root, each component opened from the one before with `O_NOFOLLOW`, so a symbolic link
/// on the way is refused, never followed. A daemon that writes for another user checks that the
/// user could have created each directory, and a daemon running as root gives them to the user,
/// as it gives the files.
enum DirectoryCreator {
    /// Creates the missing directories of `path` for `owner`; an error names the component at fault.
    static func createDirectories(of path: String, roots: AllowedRoots, owner: DownloadOwner) throws(CoreError) {
        do throws(DestinationError) {
            let destination = try DestinationPath.parse(path, roots: roots)
            try create(destination, owner: owner, access: owner.accessToCheck())
        } catch {
            throw CoreError(.invalidDestination, error.message)
        }
    }

    /// Walks from the root to the destination's directory, creating each missing directory.
    static func create(_ destination: DestinationPath, owner: DownloadOwner?, access: UserAccess?) throws(DestinationError) {
        let rootFD = try DirectoryWalker.openRoot(of: destination)
        var current = rootFD
        defer { close(current) }
        try DirectoryWalker.check(rootFD, destination.root, access: access, last: false)
        for (index, component) in destination.directories.enumerated() {
            let here = destination.prefix(index + 1)
            var fd = openat(current, component, DirectoryWalker.oPath | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0, errno == ENOENT {
                // The user must be allowed to create it where it goes.
                try DirectoryWalker.check(current, destination.prefix(index), access: access, last: true)
                fd = try make(component, in: current, at: here, root: destination.root, owner: owner)
            } else if fd < 0 {
                throw DirectoryWalker.failure(errno, at: here, in: current, name: component, root: destination.root)
            } else {
                do throws(DestinationError) {
                    try DirectoryWalker.check(fd, here, access: access, last: false)
                } catch {
                    close(fd)
                    throw error
                }
            }
            close(current)
            current = fd
        }
    }

    /// Creates the directory `name` in `parent` (reached as `path`), syncs its entry, and gives it
    /// to `owner` when the daemon writes for another user as root. A directory that appeared
    /// meanwhile is used as found, unless it is a symbolic link.
    private static func make(_ name: String, in parent: Int32, at path: String, root: String, owner: DownloadOwner?) throws(DestinationError) -> Int32 {
        // The mode passes through the daemon's umask, as a file's does.
        let created = mkdirat(parent, name, 0o777) == 0
        if !created, errno != EEXIST {
            let code = errno
            throw DestinationError(.system(errno: code), "cannot create the directory \(path): \(String(cString: strerror(code)))")
        }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw DirectoryWalker.failure(errno, at: path, in: parent, name: name, root: root) }
        guard created else { return fd }
        do throws(DestinationError) {
            if let owner, owner.receivesFiles {
                // A set-group-ID parent has given the directory its group already.
                var parentInfo = stat()
                let inheritsGroup = fstat(parent, &parentInfo) == 0 && parentInfo.st_mode & S_ISGID != 0
                let gid = inheritsGroup ? gid_t.max : (owner.gid ?? UserAccount(uid: owner.uid)?.gid ?? gid_t.max)
                guard fchown(fd, owner.uid, gid) == 0 else {
                    let code = errno
                    throw DestinationError(.system(errno: code), "cannot give \(path) to uid \(owner.uid): \(String(cString: strerror(code)))")
                }
            }
            // The job will be acknowledged as durable: so is the directory it lands in.
            let parentForSync = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { if parentForSync >= 0 { close(parentForSync) } }
            guard parentForSync >= 0, fsync(parentForSync) == 0 else {
                let code = errno
                throw DestinationError(.system(errno: code), "cannot sync the directory holding \(path): \(String(cString: strerror(code)))")
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }
}
