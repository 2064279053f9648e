import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

extension Landing {
    /// The cause of a refused replace when it is a sticky directory (`/tmp`, mode 1777), where
    /// only the owner of a file (or of the directory) may replace it: the fix is then the owner's,
    /// not the daemon's permissions. Nil when the directory is not sticky or the file is the
    /// daemon's own.
    static func stickyRefusal(in directory: DirectoryHandle, name: String, destination: String) -> JobError? {
        var directoryInfo = stat()
        guard fstat(directory.fd, &directoryInfo) == 0, directoryInfo.st_mode & S_ISVTX != 0 else { return nil }
        var existing = stat()
        guard fstatat(directory.fd, name, &existing, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
        let daemon = geteuid()
        guard existing.st_uid != daemon, directoryInfo.st_uid != daemon else { return nil }
        let mode = String(directoryInfo.st_mode & 0o7777, radix: 8)
        return JobError(
            code: .disk,
            message: "cannot replace \(destination): it belongs to uid \(existing.st_uid), and its directory is sticky "
                + "(mode \(mode), as /tmp is), where only a file's owner may replace or remove it. Have its owner remove it, "
                + "or choose another destination, then submit again")
    }
}
