import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A plain upload's body, read from its spool copy, whose pages leave the page cache once read.
///
/// The copy was synced at the hand-off and is removed once the upload ends, so keeping its pages
/// cached only pushes out what the machine's other programs use: a 10 GiB backup would take 10 GiB
/// of cache. Each read's pages are dropped (`POSIX_FADV_DONTNEED`, a few MiB at a time), as
/// `rsync --drop-cache` and `dd iflag=nocache` do. Sending the copy again (a new connection, a
/// retry) reads it from the disk.
///
/// It also makes the `PUT` faster where the server is on the same machine: the pages freed are the
/// ones the server's own writes reuse. A 1 GiB `PUT` to a local nginx of a file just copied, read
/// by `dd iflag=nocache`, took 0.98–1.31 s, against 1.23–2.77 s when its pages stayed cached.
///
/// FoundationNetworking opens the stream, asks `hasBytesAvailable` and reads, on its own queue, one
/// reader at a time; it never schedules it on a run loop.
final class SpoolBodyStream: InputStream {
    /// Pages are dropped up to each multiple of this many bytes read. The kernel drops only whole
    /// folios, which may be as large as a few MiB: a drop ending inside one would leave it cached,
    /// and the next drop, starting inside it, too.
    static let dropStride: Int64 = 8 << 20

    private let path: String
    private var descriptor: Int32 = -1
    private var status: Stream.Status = .notOpen
    private var failure: POSIXErrorCode?
    /// Bytes read, and the offset up to which pages were dropped.
    private var offset: Int64 = 0
    private var dropped: Int64 = 0

    init(path: String) {
        self.path = path
        super.init(data: Data())
    }

    deinit {
        release()
    }

    override func open() {
        guard status == .notOpen else { return }
        descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            fail()
        } else {
            status = .open
        }
    }

    override func close() {
        release()
        status = .closed
    }

    /// Drops what was read and closes the copy: at the end, on an error, on `close()`, and when
    /// FoundationNetworking lets go of a stream it stopped reading (a request sent again). Nothing
    /// then holds the copy open once the upload removes it.
    private func release() {
        guard descriptor >= 0 else { return }
        dropRest()
        Glibc.close(descriptor)
        descriptor = -1
    }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { failure.map { POSIXError($0) } }

    /// Until the end is read: a read at the end returns 0, which ends the body as well.
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return status == .atEnd ? 0 : -1 }
        var count: Int
        repeat {
            count = Glibc.read(descriptor, buffer, length)
        } while count < 0 && errno == EINTR
        if count > 0 {
            offset += Int64(count)
            let boundary = offset - offset % Self.dropStride
            if boundary > dropped { drop(from: dropped, length: boundary - dropped) }
        } else if count == 0 {
            status = .atEnd
            release()
        } else {
            fail()
            release()
        }
        return count
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>
    ) -> Bool { false }

    /// Everything read is dropped, and the file's end with it (a length of 0 runs to the end).
    private func dropRest() {
        if offset > dropped { drop(from: dropped, length: 0) }
    }

    private func drop(from start: Int64, length: Int64) {
        guard descriptor >= 0 else { return }
        // Advice only: a refusal changes nothing but the cache.
        _ = posix_fadvise(descriptor, off_t(start), off_t(length), POSIX_FADV_DONTNEED)
        dropped = length == 0 ? offset : start + length
    }

    private func fail() {
        failure = POSIXErrorCode(rawValue: errno) ?? .EIO
        status = .error
    }
}
