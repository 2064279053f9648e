import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Start-up: replaying the journal's bytes, cutting a torn tail (after saving it), refusing
/// corruption; and what compaction writes.
extension Journal {
    /// Where a live key's latest value lies in the journal file.
    struct Location: Sendable, Equatable {
        var offset: Int
        var length: Int
    }

    struct Recovered {
        var index = DenseTable<IndexKey, Location>()
        var lastSequence: UInt64 = 0
        var fileBytes = 0
        var created = false
    }

    /// Replays the journal file without copying it: it is mapped, each record checked where it
    /// lies, and only the latest location of each live key kept.
    static func recover(path: String, directory: String, logger: Logger) throws(JournalError) -> Recovered {
        // A temporary file left by an interrupted compaction was never renamed: the journal is intact.
        unlink(path + ".compact")
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return Recovered(created: true) }
            throw JournalError(code: .io, message: "cannot read the journal: \(FileIOError("open", path))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw JournalError(code: .io, message: "cannot read the journal: \(FileIOError("fstat", path))") }
        let size = Int(info.st_size)
        guard size > 0 else { return Recovered() }
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapping != MAP_FAILED else {
            throw JournalError(code: .io, message: "cannot read the journal: \(FileIOError("mmap", path))")
        }
        defer { munmap(mapping, size) }
        let buffer = UnsafeRawBufferPointer(start: mapping, count: size)
        var recovered = Recovered()
        // About one live key per 600 bytes of a compacted journal (a finished job's record); once
        // the first records tell their size, room for as many more as the file holds of their
        // like (a queued job's record is half as long). Not more than one per 250 bytes: a
        // journal that rewrote its records many times holds fewer keys than records.
        recovered.index.reserveCapacity(size / 600)
        var records = 0
        let replayed = try replay(buffer, path: path) { located in
            records += 1
            if records == 4096 {
                recovered.index.reserveCapacity(min(size / 250, Int(Double(size) * Double(records) / Double(located.next))))
            }
            let key = IndexKey(utf8: UnsafeRawBufferPointer(rebasing: buffer[located.keyRange]))
            switch located.operation {
            case .put: recovered.index[key] = Location(offset: located.value.lowerBound, length: located.value.count)
            case .delete: recovered.index.removeValue(forKey: key)
            }
        }
        if replayed.validBytes < size {
            try cutTornTail(
                path: path, directory: directory, tail: Array(buffer[replayed.validBytes...]), offset: replayed.validBytes, logger: logger)
        }
        recovered.lastSequence = replayed.lastSequence
        recovered.fileBytes = replayed.validBytes
        return recovered
    }

    /// Replays journal bytes in memory as start-up does, touching no file: the live keys, the last
    /// sequence number, and where the valid records end (before a torn tail, which start-up cuts
    /// off). A damaged record followed by valid ones throws `.corrupt`, naming `path` and the offset.
    public static func replay(_ data: [UInt8], path: String = "(in memory)") throws(JournalError) -> JournalReplay {
        let result: Result<JournalReplay, JournalError> = data.withUnsafeBytes { buffer in
            var live: [String: [UInt8]] = [:]
            do throws(JournalError) {
                let replayed = try replay(buffer, path: path) { located in
                    switch located.operation {
                    case .put: live[located.key(in: buffer)] = Array(buffer[located.value])
                    case .delete: live.removeValue(forKey: located.key(in: buffer))
                    }
                }
                return .success(JournalReplay(live: live, lastSequence: replayed.lastSequence, validBytes: replayed.validBytes))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Checks every record of `buffer` in order and hands each valid one to `apply`; returns the
    /// last sequence number and where the valid records end.
    static func replay(
        _ buffer: UnsafeRawBufferPointer, path: String, apply: (JournalRecord.Located) -> Void
    ) throws(JournalError) -> (lastSequence: UInt64, validBytes: Int) {
        var lastSequence: UInt64 = 0
        var offset = 0
        while offset < buffer.count {
            switch JournalRecord.locate(in: buffer, at: offset) {
            case .success(let located):
                guard located.sequence > lastSequence else {
                    throw corruption(path: path, offset: offset, detail: "sequence number \(located.sequence) does not increase")
                }
                lastSequence = located.sequence
                apply(located)
                offset = located.next
            case .failure(let failure):
                if validRecordExists(in: buffer, after: offset) {
                    throw corruption(path: path, offset: offset, detail: "\(failure)")
                }
                return (lastSequence, offset)
            }
        }
        return (lastSequence, buffer.count)
    }

    /// The records compaction writes for `live`, in key order, numbered from `firstSequence`.
    public static func snapshot(of live: [String: [UInt8]], firstSequence: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        var sequence = firstSequence
        for key in live.keys.sorted() {
            guard let value = live[key] else { continue }
            JournalRecord(sequence: sequence, operation: .put, key: key, value: value).encode(into: &bytes)
            sequence += 1
        }
        return bytes
    }

    static func corruption(path: String, offset: Int, detail: String) -> JournalError {
        JournalError(
            code: .corrupt,
            message: "the journal \(path) is corrupt at byte offset \(offset) (\(detail)), and valid records follow; "
                + "transferd will not guess which jobs to drop. Keep a copy of the file for inspection, then either "
                + "restore it from a backup or move it aside to start with an empty journal.")
    }

    /// Whether any line after the one starting at `offset` is a valid record on its own.
    static func validRecordExists(in buffer: UnsafeRawBufferPointer, after offset: Int) -> Bool {
        guard var cursor = buffer.firstIndex(of: UInt8(ascii: "\n"), from: offset).map({ $0 + 1 }) else { return false }
        while cursor < buffer.count {
            switch JournalRecord.locate(in: buffer, at: cursor) {
            case .success: return true
            case .failure(.incomplete): return false
            case .failure:
                guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n"), from: cursor) else { return false }
                cursor = newline + 1
            }
        }
        return false
    }

    /// Torn tails kept beside the journal; older copies are removed.
    static let tornCopiesKept = 5

    /// Saves the bytes after `offset` (the torn tail, usually a part of one record) to
    /// `journal.torn-TIME`, keeps the newest `tornCopiesKept` such copies, then cuts the journal
    /// at `offset`. Start-up never needs free space: a copy the filesystem has no room for is
    /// removed and the tail is cut without it (it was never acknowledged); a copy that cannot be
    /// written for another reason stops start-up with what to fix.
    static func cutTornTail(path: String, directory: String, tail: [UInt8], offset: Int, logger: Logger) throws(JournalError) {
        var copy = path + ".torn-\(time(nil))"
        var suffix = 1
        while access(copy, F_OK) == 0 {
            copy = path + ".torn-\(time(nil))-\(suffix)"
            suffix += 1
        }
        var saved: String? = copy
        do throws(FileIOError) {
            try FileIO.writeFile(copy, tail)
            try FileIO.syncDirectory(directory)
        } catch let error where FileIO.isOutOfSpace(error.errno) {
            unlink(copy)
            saved = nil
            logger.error(
                "the state directory's filesystem has no room for a copy of the journal's torn tail: it is cut off without one",
                metadata: ["file": "\(path)", "offset": "\(offset)", "dropped_bytes": "\(tail.count)", "error": "\(error)"])
        } catch {
            unlink(copy)
            throw JournalError(
                code: .io,
                message: "cannot save the torn tail of the journal (\(tail.count) bytes) before cutting it off: \(error); "
                    + "make \(directory) writable by transferd, then start it again")
        }
        do throws(FileIOError) {
            guard truncate(path, off_t(offset)) == 0 else { throw FileIOError("truncate", path) }
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileIOError("open", path) }
            defer { close(fd) }
            try FileIO.fsync(fd, path: path)
        } catch {
            throw JournalError(code: .io, message: "cannot cut the torn tail of the journal: \(error)")
        }
        let removed = pruneTornCopies(of: path, directory: directory, keeping: tornCopiesKept)
        logger.warning(
            "journal had a torn tail (an interrupted write); cut it off",
            metadata: [
                "file": "\(path)", "offset": "\(offset)", "dropped_bytes": "\(tail.count)", "copy": "\(saved ?? "none")",
                "old_copies_removed": "\(removed)",
            ])
    }

    /// Removes all but the newest `keeping` torn-tail copies of `path` (by modification time, then
    /// name); returns how many went.
    static func pruneTornCopies(of path: String, directory: String, keeping: Int) -> Int {
        let prefix = FileIO.lastComponent(of: path) + ".torn-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        let copies: [(name: String, modified: Int)] = names.filter { $0.hasPrefix(prefix) }.compactMap { name in
            var info = stat()
            guard lstat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            return (name, Int(info.st_mtim.tv_sec))
        }
        let sorted = copies.sorted { ($0.modified, $0.name) > ($1.modified, $1.name) }
        var removed = 0
        for old in sorted.dropFirst(keeping) where unlink(directory + "/" + old.name) == 0 {
            removed += 1
        }
        return removed
    }
}
