import Foundation
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Start-up: replaying the journal's bytes, cutting a torn tail (after saving it), refusing
/// corruption; and what compaction writes.
extension Journal {
    struct Recovered {
        var live: [String: [UInt8]] = [:]
        var lastSequence: UInt64 = 0
        var fileBytes = 0
        var created = false
    }

    static func recover(path: String, directory: String, logger: Logger) throws(JournalError) -> Recovered {
        // A temporary file left by an interrupted compaction was never renamed: the journal is intact.
        unlink(path + ".compact")
        let data: [UInt8]
        do throws(FileIOError) {
            guard let contents = try FileIO.readFile(path) else {
                return Recovered(created: true)
            }
            data = contents
        } catch {
            throw JournalError(code: .io, message: "cannot read the journal: \(error)")
        }
        let replayed = try replay(data, path: path)
        if replayed.validBytes < data.count {
            try cutTornTail(path: path, directory: directory, data: data, offset: replayed.validBytes, logger: logger)
        }
        return Recovered(live: replayed.live, lastSequence: replayed.lastSequence, fileBytes: replayed.validBytes)
    }

    /// Replays journal bytes in memory as start-up does, touching no file: the live keys, the last
    /// sequence number, and where the valid records end (before a torn tail, which start-up cuts
    /// off). A damaged record followed by valid ones throws `.corrupt`, naming `path` and the offset.
    public static func replay(_ data: [UInt8], path: String = "(in memory)") throws(JournalError) -> JournalReplay {
        var replayed = JournalReplay()
        var offset = 0
        while offset < data.count {
            switch JournalRecord.decode(data, at: offset) {
            case .success(let (record, next)):
                guard record.sequence > replayed.lastSequence else {
                    throw corruption(path: path, offset: offset, detail: "sequence number \(record.sequence) does not increase")
                }
                replayed.lastSequence = record.sequence
                switch record.operation {
                case .put: replayed.live[record.key] = record.value
                case .delete: replayed.live.removeValue(forKey: record.key)
                }
                offset = next
            case .failure(let failure):
                if validRecordExists(in: data, after: offset) {
                    throw corruption(path: path, offset: offset, detail: "\(failure)")
                }
                replayed.validBytes = offset
                return replayed
            }
        }
        replayed.validBytes = data.count
        return replayed
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
    static func validRecordExists(in data: [UInt8], after offset: Int) -> Bool {
        guard var cursor = data[offset...].firstIndex(of: UInt8(ascii: "\n")).map({ $0 + 1 }) else { return false }
        while cursor < data.count {
            switch JournalRecord.decode(data, at: cursor) {
            case .success: return true
            case .failure(.incomplete): return false
            case .failure:
                guard let newline = data[cursor...].firstIndex(of: UInt8(ascii: "\n")) else { return false }
                cursor = newline + 1
            }
        }
        return false
    }

    /// Torn tails kept beside the journal; older copies are removed.
    static let tornCopiesKept = 5

    /// Saves the bytes after `offset` (the torn tail, usually a part of one record) to
    /// `journal.torn-TIME`, keeps the newest `tornCopiesKept` such copies, then cuts the journal
    /// at `offset`. A copy that cannot be written is removed, and start-up stops with what to free.
    static func cutTornTail(path: String, directory: String, data: [UInt8], offset: Int, logger: Logger) throws(JournalError) {
        let tail = Array(data[offset...])
        var copy = path + ".torn-\(time(nil))"
        var suffix = 1
        while access(copy, F_OK) == 0 {
            copy = path + ".torn-\(time(nil))-\(suffix)"
            suffix += 1
        }
        do throws(FileIOError) {
            try FileIO.writeFile(copy, tail)
            try FileIO.syncDirectory(directory)
        } catch {
            unlink(copy)
            let fix =
                error.errno == ENOSPC || error.errno == EDQUOT
                ? "the state directory's filesystem is full: free at least \(tail.count + 4096) bytes on the filesystem of \(directory) "
                    + "(old \(FileIO.lastComponent(of: path)).torn-* copies there may go), then start transferd again"
                : "make \(directory) writable by transferd, then start it again"
            throw JournalError(
                code: .io, message: "cannot save the torn tail of the journal (\(tail.count) bytes) before cutting it off: \(error); \(fix)")
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
                "file": "\(path)", "offset": "\(offset)", "dropped_bytes": "\(tail.count)", "copy": "\(copy)",
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
