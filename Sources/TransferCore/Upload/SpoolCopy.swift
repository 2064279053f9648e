import CLinuxShims
#if canImport(Glibc)
import Glibc
#endif

/// Copies an open file into a new spool file and digests the copy. Pure I/O, no bookkeeping.
enum SpoolCopy {
    /// Why a copy failed: a message naming `source` (as the submitter named it) and the fix.
    struct Failure: Error {
        var message: String
        /// Whether the spool's disk failed (rather than the source).
        var spoolSide: Bool
    }

    /// Copies the bytes of `source` in `range` to `target` with `copy_file_range` (a reflink
    /// where the filesystem shares extents; the kernel copies otherwise), falling back to
    /// `pread`/`pwrite` across filesystems that refuse it. Fails if the source is shorter. A byte
    /// at offset `n` of `source` lands at `n + shift` in `target`.
    static func copy(from source: Int32, named name: String, range: Range<Int64>, to target: Int32, shift: Int64 = 0, path: String) throws(Failure) {
        let size = range.upperBound
        var inOffset: Int64 = range.lowerBound
        var outOffset: Int64 = range.lowerBound + shift
        while inOffset < size {
            let chunk = Int(min(size - inOffset, 1 << 30))
            let copied = clinuxshims_copy_file_range(source, &inOffset, target, &outOffset, chunk)
            if copied > 0 { continue }
            if copied == 0 { throw Failure(message: changed(name), spoolSide: false) }
            switch errno {
            case EINTR:
                continue
            case EXDEV, ENOSYS, EINVAL, EOPNOTSUPP, ETXTBSY:
                try fallback(from: source, named: name, size: size, offset: inOffset, to: target, shift: shift, path: path)
                return
            case EBADF:
                throw Failure(message: "\(name) was not opened for reading: open it read-only and pass it again", spoolSide: false)
            case EIO:
                throw Failure(message: "cannot read \(name): input/output error; check the disk it is on", spoolSide: false)
            default:
                throw Failure(message: "cannot copy \(name) into the spool (\(path)): \(String(cString: strerror(errno)))", spoolSide: true)
            }
        }
    }

    private static func fallback(
        from source: Int32, named name: String, size: Int64, offset start: Int64, to target: Int32, shift: Int64, path: String
    ) throws(Failure) {
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = start
        while offset < size {
            let n = pread(source, buffer.baseAddress, Int(min(Int64(bufferSize), size - offset)), off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(message: "cannot read \(name): \(String(cString: strerror(errno)))", spoolSide: false)
            }
            if n == 0 { throw Failure(message: changed(name), spoolSide: false) }
            try write(UnsafeRawBufferPointer(start: buffer.baseAddress, count: n), at: offset + shift, to: target, path: path, of: name)
            offset += Int64(n)
        }
    }

    /// Writes all of `bytes` at `offset` of `target`.
    static func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, to target: Int32, path: String, of name: String) throws(Failure) {
        var written = 0
        while written < bytes.count {
            let w = pwrite(target, bytes.baseAddress.map { $0 + written }, bytes.count - written, off_t(offset) + off_t(written))
            if w < 0 {
                if errno == EINTR { continue }
                throw Failure(message: "cannot write the spool copy of \(name): \(FileIOError("write", path))", spoolSide: true)
            }
            written += w
        }
    }

    /// Writes all of `bytes` at `offset` of `target`.
    static func write(_ bytes: [UInt8], at offset: Int64, to target: Int32, path: String, of name: String) throws(Failure) {
        let failure: Failure? = bytes.withUnsafeBytes { raw in
            do throws(Failure) {
                try write(raw, at: offset, to: target, path: path, of: name)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    private static func changed(_ name: String) -> String {
        "\(name) became shorter while it was copied: submit it again once nothing writes to it"
    }
}
