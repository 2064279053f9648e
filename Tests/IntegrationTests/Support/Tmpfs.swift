import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small tmpfs mounted for a test, to fill a disk on purpose. Needs root (CI runs as root).
struct Tmpfs {
    let path: String

    /// Whether this process may mount a tmpfs: checked once by mounting and unmounting one.
    static let available: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = "/tmp/td-tmpfs-probe-\(getpid())"
        guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)) != nil else { return false }
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard runQuietly("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]) == 0 else { return false }
        return runQuietly("/bin/umount", [probe]) == 0
    }()

    /// Mounts a tmpfs of `megabytes` MiB at `path` (created if needed).
    init(at path: String, megabytes: Int) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        guard runQuietly("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", path]) == 0 else {
            throw DeadlineExceeded(description: "cannot mount a tmpfs at \(path)")
        }
        self.path = path
    }

    /// Fills the filesystem completely with a file at `name`; returns its path.
    func fill(name: String = "filler") -> String {
        let filler = path + "/" + name
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x55, count: 64 << 10)
        var size = chunk.count
        while size > 0 {
            if chunk.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) < 0 { size /= 2 }
        }
        return filler
    }

    func unmount() {
        _ = runQuietly("/bin/umount", ["-l", path])
    }
}
