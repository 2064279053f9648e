import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call on a path: what was attempted, where, and errno.
public struct FileIOError: Error, CustomStringConvertible, Sendable {
    public var operation: String
    public var path: String
    public var errno: Int32

    /// Records a failure; `errno` defaults to the calling thread's current value.
    public init(_ operation: String, _ path: String, errno code: Int32? = nil) {
        self.operation = operation
        self.path = path
        self.errno = code ?? Glibc.errno
    }

    public var description: String { "\(operation) \(path): \(String(cString: strerror(errno)))" }
}

/// Thin, errno-checked wrappers over the few system calls the journal and the engine need.
enum FileIO {
    /// Writes every byte, retrying short writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileIOError) {
        if let code = FileIOFaults.fault("write", path: path) {
            // As a full disk does: part of the bytes land before the write is refused.
            _ = write(fd, bytes.baseAddress, bytes.count / 2)
            throw FileIOError("write", path, errno: code)
        }
        var written = 0
        while written < bytes.count {
            let n = write(fd, bytes.baseAddress.map { $0 + written }, bytes.count - written)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileIOError("write", path)
            }
            written += n
        }
    }

    /// Writes every byte at `offset`, leaving the file position alone; retries short writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64, path: String) throws(FileIOError) {
        if let code = FileIOFaults.fault("write", path: path) {
            _ = pwrite(fd, bytes.baseAddress, bytes.count / 2, off_t(offset))
            throw FileIOError("write", path, errno: code)
        }
        var written = 0
        while written < bytes.count {
            let n = pwrite(fd, bytes.baseAddress.map { $0 + written }, bytes.count - written, off_t(offset) + off_t(written))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileIOError("write", path)
            }
            written += n
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(FileIOError) {
        var failure: FileIOError?
        bytes.withUnsafeBytes { raw in
            do throws(FileIOError) { try writeAll(fd, raw, path: path) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    static func fdatasync(_ fd: Int32, path: String) throws(FileIOError) {
        if let code = FileIOFaults.fault("fdatasync", path: path) { throw FileIOError("fdatasync", path, errno: code) }
        guard Glibc.fdatasync(fd) == 0 else { throw FileIOError("fdatasync", path) }
    }

    static func fsync(_ fd: Int32, path: String) throws(FileIOError) {
        if let code = FileIOFaults.fault("fsync", path: path) { throw FileIOError("fsync", path, errno: code) }
        guard Glibc.fsync(fd) == 0 else { throw FileIOError("fsync", path) }
    }

    /// Makes a rename or creation inside `directory` durable.
    static func syncDirectory(_ directory: String) throws(FileIOError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileIOError("open", directory) }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw FileIOError("fsync", directory) }
    }

    /// Reads a whole file; nil when it does not exist.
    static func readFile(_ path: String) throws(FileIOError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw FileIOError("open", path)
        }
        defer { close(fd) }
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileIOError("read", path)
            }
            if n == 0 { return result }
            result.append(contentsOf: chunk[..<n])
        }
    }

    /// Creates or replaces `path` with `bytes`, synced, mode 0600.
    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(FileIOError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileIOError("open", path) }
        defer { close(fd) }
        try writeAll(fd, bytes, path: path)
        try fsync(fd, path: path)
    }

    /// Whether `error` says the filesystem is out of blocks or inodes, or the owner's quota is used
    /// up: a refusal to retry once space is back, not a failing device.
    static func isOutOfSpace(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT
    }

    /// Bytes an unprivileged user may still write on the filesystem holding `path`; nil when unknown.
    static func availableBytes(_ path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return availableBytes(info)
    }

    /// Bytes an unprivileged user may still write, from a filesystem's `statvfs`.
    static func availableBytes(_ info: statvfs) -> Int64 {
        let (product, overflow) = Int64(info.f_bavail).multipliedReportingOverflow(by: Int64(info.f_frsize))
        return overflow ? Int64.max : product
    }

    /// The file name at the end of a path: `c` for `/a/b/c`.
    static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The directory part of an absolute path: `/a/b` for `/a/b/c`, `/` for `/c`.
    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

/// Failures injected into `FileIO`'s writes and syncs, for tests of full disks and failing
/// devices: a rule fails the calls of one operation on paths starting with a prefix, `count` times.
enum FileIOFaults {
    struct Rule: Sendable {
        var operation: String
        var pathPrefix: String
        var errno: Int32
        var count: Int
    }

    private static let rules = Mutex<[Rule]>([])
    /// Read without the lock on every call: the hot paths pay one atomic load when no rule is set.
    private static let armed = Atomic<Bool>(false)

    /// Fails the next `count` calls of `operation` (`write`, `fsync`, `fdatasync`) on paths starting with `pathPrefix`.
    static func inject(_ operation: String, pathPrefix: String, errno: Int32, count: Int = 1) {
        rules.withLock { $0.append(Rule(operation: operation, pathPrefix: pathPrefix, errno: errno, count: count)) }
        armed.store(true, ordering: .releasing)
    }

    /// Removes the rules of paths starting with `pathPrefix` (a test's own, while others run).
    static func remove(pathPrefix: String) {
        rules.withLock { $0.removeAll { $0.pathPrefix == pathPrefix } }
    }

    /// Removes every rule.
    static func clear() {
        rules.withLock { $0.removeAll() }
        armed.store(false, ordering: .releasing)
    }

    /// The errno a rule makes this call fail with, if one does.
    static func fault(_ operation: String, path: String) -> Int32? {
        guard armed.load(ordering: .acquiring) else { return nil }
        return rules.withLock { rules in
            guard let index = rules.firstIndex(where: { $0.operation == operation && path.hasPrefix($0.pathPrefix) && $0.count > 0 }) else {
                return nil
            }
            rules[index].count -= 1
            return rules[index].errno
        }
    }
}
