import COpenat2
#if canImport(Glibc)
import Glibc
#endif

/// Opens the directory a destination lands in by walking down from its allowed root without
/// following a single symbolic link.
///
/// The root is opened as configured (an administrator may have made it a link). Below it, the
/// kernel resolves the rest with `openat2` and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` where it
/// can; otherwise, and to name the component at fault when that fails, each directory is opened
/// from the one before with `O_NOFOLLOW | O_DIRECTORY`.
enum DirectoryWalker {
    /// How to walk; tests force the component-wise walk to cover it on kernels with `openat2`.
    enum Method: Sendable {
        case automatic
        case componentWise
    }

    /// O_PATH: opens a directory to walk from it, without needing permission to read it.
    static let oPath = copenat2_o_path()

    /// Opens `destination`'s allowed root (O_PATH), to walk down from it; the caller closes it.
    static func openRoot(of destination: DestinationPath) throws(DestinationError) -> Int32 {
        let rootFD = Glibc.open(destination.root, oPath | O_DIRECTORY | O_CLOEXEC)
        guard rootFD >= 0 else {
            let code = errno
            throw DestinationError(
                .system(errno: code),
                "the allowed root \(destination.root) cannot be opened (\(String(cString: strerror(code)))): create it, "
                    + "or change the allowed roots (allowed_roots)")
        }
        return rootFD
    }

    /// Opens the directory `destination` lands in. With `access`, also checks that this user may
    /// enter every directory from the root down and write the last one.
    static func open(_ destination: DestinationPath, access: UserAccess?, method: Method = .automatic) throws(DestinationError) -> DirectoryHandle {
        let rootFD = try openRoot(of: destination)
        defer { close(rootFD) }
        if access == nil, method == .automatic {
            let relative = destination.directories.isEmpty ? "." : destination.directories.joined(separator: "/")
            let fd = copenat2_beneath(rootFD, relative, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if fd >= 0 { return DirectoryHandle(fd: fd, path: destination.directory) }
            // No openat2 here (an old kernel, a seccomp filter), or a component is at fault: the
            // walk below works everywhere and says which one.
        }
        return try walk(destination, from: rootFD, access: access)
    }

    private static func walk(_ destination: DestinationPath, from rootFD: Int32, access: UserAccess?) throws(DestinationError) -> DirectoryHandle {
        if destination.directories.isEmpty {
            let fd = openat(rootFD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw failure(errno, at: destination.root, in: rootFD, name: ".", root: destination.root) }
            let handle = DirectoryHandle(fd: fd, path: destination.root)
            try check(handle.fd, destination.root, access: access, last: true)
            return handle
        }
        try check(rootFD, destination.root, access: access, last: false)
        var current = rootFD
        defer { if current != rootFD { close(current) } }
        for (index, component) in destination.directories.enumerated() {
            let last = index == destination.directories.count - 1
            let here = destination.prefix(index + 1)
            // O_PATH needs no read permission on the directories passed through; the last one is
            // opened for reading so that it can be synced.
            let fd = openat(current, component, (last ? O_RDONLY : oPath) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard fd >= 0 else { throw failure(errno, at: here, in: current, name: component, root: destination.root) }
            if current != rootFD { close(current) }
            current = fd
            try check(fd, here, access: access, last: last)
        }
        let handle = DirectoryHandle(fd: current, path: destination.directory)
        current = rootFD
        return handle
    }

    /// Checks that the user may pass through the directory `fd`, and write it when it is the last.
    static func check(_ fd: Int32, _ path: String, access: UserAccess?, last: Bool) throws(DestinationError) {
        guard let access else { return }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            throw DestinationError(.system(errno: code), "cannot check \(path): \(String(cString: strerror(code)))")
        }
        if last ? !access.mayWrite(info) : !access.maySearch(info) {
            throw DestinationError(
                .userPermission,
                "\(access.name) may not \(last ? "write to" : "enter") \(path) (\(UserAccess.describe(info))), and transferd writes "
                    + "only where the submitting user could: choose a directory you may write to, or ask its owner for access")
        }
    }

    /// The error for a failed open of `name` inside `parent` (reached as `path`).
    static func failure(_ code: Int32, at path: String, in parent: Int32, name: String, root: String) -> DestinationError {
        var info = stat()
        let isLink = fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
        if code == ELOOP || isLink {
            return DestinationError(
                .symbolicLink,
                "\(path) is a symbolic link, and transferd follows none below an allowed root (\(root)): "
                    + "give the real path of the directory instead")
        }
        switch code {
        case ENOENT:
            return DestinationError(.missing, "the directory \(path) does not exist: create it first, or submit with create_directories (transferctl submit --create-dirs)")
        case ENOTDIR:
            return DestinationError(.notDirectory, "\(path) is not a directory: give a path whose directories exist")
        case EACCES:
            return DestinationError(
                .system(errno: code),
                "transferd may not enter \(path) (\(String(cString: strerror(code)))): make it reachable by the transferd service's user, "
                    + "or choose another directory")
        default:
            return DestinationError(.system(errno: code), "cannot open the directory \(path): \(String(cString: strerror(code)))")
        }
    }
}
