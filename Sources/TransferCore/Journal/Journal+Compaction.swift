import Foundation
import Synchronization
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Compaction: the live records copied to a new file that replaces the journal, so that its size
/// follows the live jobs, not their history.
extension Journal {
    /// Compacts now, whatever the policy says. `stopAfter` simulates a crash after that step.
    public func compact(stopAfter step: CompactionStep? = nil) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            queue.async {
                do {
                    try self.compactNow(stopAfter: step)
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private var temporaryPath: String { path + ".compact" }

    /// Runs on `queue`. Copies the live records to a temporary file, syncs it, renames it over
    /// the journal and syncs the directory; a crash at any point leaves the old or the new file.
    /// The records are copied from the mapped journal in file order, a buffer at a time, so memory
    /// does not grow with the journal.
    func compactNow(stopAfter step: CompactionStep?) throws {
        let (index, firstSequence, oldFD, oldSize) = state.withLock { ($0.index, $0.nextSequence, $0.fd, $0.statistics.fileBytes) }
        let temporary = temporaryPath
        let fd = open(temporary, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let error = FileIOError("open", temporary)
            // No inode (or quota) left: the old journal is intact, compaction waits.
            throw JournalError(code: FileIO.isOutOfSpace(error.errno) ? .noSpace : .io, message: "compaction: \(error)")
        }
        var newFileOpen = true
        defer { if newFileOpen { close(fd) } }
        var mapping: UnsafeMutableRawPointer?
        if oldSize > 0 {
            guard let mapped = mmap(nil, oldSize, PROT_READ, MAP_SHARED, oldFD, 0), mapped != MAP_FAILED else {
                throw JournalError(code: .io, message: "compaction: \(FileIOError("mmap", path))")
            }
            mapping = mapped
        }
        defer { if let mapping { munmap(mapping, oldSize) } }
        let old = UnsafeRawBufferPointer(start: mapping, count: mapping == nil ? 0 : oldSize)
        var newIndex = DenseTable<IndexKey, Location>()
        newIndex.reserveCapacity(index.count)
        var written = 0
        var sequence = firstSequence
        var renamed = false
        do throws(FileIOError) {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(1 << 20 + 4096)
            let entries = index.sorted { $0.value.offset < $1.value.offset }
            for (number, (key, location)) in entries.enumerated() {
                guard location.offset + location.length <= old.count else {
                    throw FileIOError("read", path, errno: EIO)
                }
                let value = UnsafeRawBufferPointer(rebasing: old[location.offset..<(location.offset + location.length)])
                JournalRecord.encode(sequence: sequence, operation: .put, key: key.key, value: value, into: &bytes)
                newIndex[key] = Location(offset: written + bytes.count - 1 - value.count, length: value.count)
                sequence += 1
                if bytes.count >= 1 << 20 || number + 1 == entries.count {
                    try FileIO.writeAll(fd, bytes, path: temporary)
                    written += bytes.count
                    bytes.removeAll(keepingCapacity: true)
                }
                if step == .halfOfTemporaryWritten && number + 1 == entries.count / 2 {
                    try FileIO.writeAll(fd, bytes, path: temporary)
                    throw FileIOError(SimulatedCrashMarker())
                }
            }
            if step == .halfOfTemporaryWritten { throw FileIOError(SimulatedCrashMarker()) }
            try FileIO.fsync(fd, path: temporary)
            if step == .temporarySynced { throw FileIOError(SimulatedCrashMarker()) }
            guard rename(temporary, path) == 0 else { throw FileIOError("rename", temporary) }
            renamed = true
            if step == .renamed { throw FileIOError(SimulatedCrashMarker()) }
            try FileIO.syncDirectory(directory)
            if step == .directorySynced { throw FileIOError(SimulatedCrashMarker()) }
        } catch let error where error.errno == SimulatedCrashMarker.errnoValue {
            throw SimulatedCrash()
        } catch {
            // Until the rename, the old journal is whole and still the one written to: a
            // filesystem without room for the copy only postpones compaction.
            let postponed = !renamed && FileIO.isOutOfSpace(error.errno)
            if postponed { unlink(temporary) }
            throw JournalError(code: postponed ? .noSpace : .io, message: "compaction failed: \(error)")
        }
        // The new file is the journal now; append to it and read values from it from here on.
        newFileOpen = false
        state.withLock { state in
            close(state.fd)
            state.fd = fd
            state.index = newIndex
            state.nextSequence = sequence
            state.statistics.fileBytes = written
            state.statistics.compactions += 1
        }
        logger.debug("journal compacted", metadata: ["live": "\(index.count)", "bytes": "\(written)"])
    }
}

/// Marks a simulated crash inside compaction's throwing block, which only throws FileIOError.
private struct SimulatedCrashMarker {
    static let errnoValue: Int32 = -424242
}

extension FileIOError {
    fileprivate init(_ marker: SimulatedCrashMarker) {
        self.init("simulated crash", "", errno: SimulatedCrashMarker.errnoValue)
    }
}
