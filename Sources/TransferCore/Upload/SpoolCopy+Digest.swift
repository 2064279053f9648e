import CLinuxShims
import Crypto
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension SpoolCopy {
    /// How much the copy runs ahead before the digest may read it, and before its writeback starts.
    static let slice: Int64 = 8 << 20

    /// Copies the first `size` bytes of `source` into `target` (at `path`) from offset `shift` on,
    /// writes `suffix` after them, and digests the whole of `target` (the `shift` bytes the caller
    /// wrote before included), all at once: the copy runs in slices on a thread of its own, the
    /// digest reads each slice from the page cache once it is copied, and each slice's writeback to
    /// the disk starts as soon as it is copied, so the caller's `fsync` finds little left to write.
    /// Costs about the longer of the copy and the digest, not their sum. The copy is digested, not
    /// the source, so a source changed meanwhile cannot give a digest of other bytes than those sent.
    static func copyAndDigest(
        from source: Int32, named name: String, size: Int64, to target: Int32, shift: Int64 = 0, suffix: [UInt8] = [], path: String
    ) throws(Failure) -> SHA256.Digest {
        let reader = open(path, O_RDONLY | O_CLOEXEC)
        guard reader >= 0 else { throw Failure(message: "cannot reopen \(path): \(String(cString: strerror(errno)))", spoolSide: true) }
        defer { close(reader) }
        let pipeline = Pipeline(start: shift)
        let copier: @Sendable () -> Void = {
            pipeline.run(size: size) { range throws(Failure) in
                try copy(from: source, named: name, range: range, to: target, shift: shift, path: path)
                startWriteback(of: target, (range.lowerBound + shift)..<(range.upperBound + shift))
            } finish: { end throws(Failure) in
                try write(suffix, at: end, to: target, path: path, of: name)
                return end + Int64(suffix.count)
            }
        }
        // With no thread to spare, the copy runs first and the digest after it.
        if !CheckedThread.start(copier) { copier() }
        var digest = SHA256()
        let bufferSize = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset: Int64 = 0
        while let copied = pipeline.wait(past: offset) {
            let n = pread(reader, buffer.baseAddress, Int(min(Int64(bufferSize), copied - offset)), off_t(offset))
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let message =
                    n == 0
                    ? "the spool copy \(path) ended at \(offset) bytes, before the \(copied) copied: check the state directory's disk"
                    : "cannot read the spool copy \(path) back: \(String(cString: strerror(errno)))"
                pipeline.cancel()
                throw Failure(message: message, spoolSide: true)
            }
            digest.update(bufferPointer: UnsafeRawBufferPointer(start: buffer.baseAddress, count: n))
            offset += Int64(n)
        }
        if let failure = pipeline.failure { throw failure }
        return digest.finalize()
    }

    /// Starts writing the whole pages of `range` of `fd` to the disk. A page the next slice also
    /// writes to (a form's body is not page-aligned) is left for the `fsync`: on storage that keeps
    /// pages stable under writeback, that write would wait for it.
    private static func startWriteback(of fd: Int32, _ range: Range<Int64>) {
        let page = Int64(max(sysconf(Int32(_SC_PAGESIZE)), 4096))
        let start = (range.lowerBound + page - 1) / page * page
        let end = range.upperBound / page * page
        if end > start { _ = clinuxshims_start_writeback(fd, start, end - start) }
    }

    /// The copy's progress, shared by the thread that copies and the one that digests.
    private final class Pipeline: Sendable {
        private struct State {
            var copied: Int64 = 0
            var finished = false
            var cancelled = false
            var failure: Failure?
        }
        private let state: Mutex<State>
        /// Signalled after each slice, and when the copy ends.
        private let progressed = DispatchSemaphore(value: 0)
        /// Where the copy starts in the target: the bytes before are ready to digest at once.
        private let start: Int64

        init(start: Int64) {
            self.start = start
            state = Mutex(State(copied: start))
        }

        /// On the copying thread: copies `0..<size` of the source a slice at a time with
        /// `copySlice` (landing `start` bytes further in the target), then calls `finish` with the
        /// target's offset after them (it returns the target's final length), until it is done,
        /// fails, or is cancelled.
        func run(size: Int64, copySlice: (Range<Int64>) throws(Failure) -> Void, finish: (Int64) throws(Failure) -> Int64) {
            var at: Int64 = 0
            var failure: Failure?
            while at < size, !state.withLock({ $0.cancelled }) {
                let end = min(size, at + SpoolCopy.slice)
                do throws(Failure) {
                    try copySlice(at..<end)
                } catch {
                    failure = error
                    break
                }
                at = end
                state.withLock { $0.copied = start + end }
                progressed.signal()
            }
            if failure == nil, at == size {
                do throws(Failure) {
                    let length = try finish(start + size)
                    state.withLock { $0.copied = length }
                } catch {
                    failure = error
                }
            }
            state.withLock {
                $0.finished = true
                $0.failure = failure
            }
            progressed.signal()
        }

        /// Waits until bytes past `offset` are copied and returns how far the copy has come; nil
        /// once the copy has ended without bytes past `offset` (done, failed or cancelled).
        func wait(past offset: Int64) -> Int64? {
            while true {
                let now = state.withLock { $0 }
                if now.copied > offset { return now.copied }
                if now.finished { return nil }
                progressed.wait()
            }
        }

        /// Stops the copy after its current slice and waits for the copying thread to finish with
        /// the descriptors.
        func cancel() {
            state.withLock { $0.cancelled = true }
            while wait(past: .max) != nil {}
        }

        /// Why the copy failed, once it has ended.
        var failure: Failure? { state.withLock { $0.failure } }
    }
}
