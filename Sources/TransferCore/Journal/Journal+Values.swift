import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Reading values back: the journal keeps where each live key's latest value lies in its file,
/// not the value, and reads it when asked.
extension Journal {
    /// The latest value of every live key, as replayed from disk and changed since (read from the
    /// file: for tests and small journals).
    public var values: [String: [UInt8]] {
        state.withLock { state in
            var values: [String: [UInt8]] = [:]
            for (key, location) in state.index { values[key.key] = Self.read(location, from: state.fd) }
            return values
        }
    }

    /// Calls `body` with every live key and its value as they are on disk, without copying the
    /// values: the file is mapped for the call. For start-up, before anything is written.
    public func forEachLiveValue(_ body: (String, UnsafeRawBufferPointer) throws -> Void) throws {
        try withLiveValues { values in
            for index in 0..<values.count { try body(values.key(index), values.value(index)) }
        }
    }

    /// Calls `body` with every live key and its value as they are on disk, in the order of the
    /// file: the file is mapped for the call, and `body` may read the values from several threads.
    /// For start-up, before anything is written.
    ///
    /// The order of the file is mostly the order jobs were submitted in: the mapping is read
    /// front to back, and what the caller sorts by submission is nearly sorted.
    public func withLiveValues<T>(_ body: (LiveValues) throws -> T) throws -> T? {
        try state.withLock { state in
            let size = state.statistics.fileBytes
            guard size > 0, !state.index.isEmpty else { return nil }
            guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, state.fd, 0), mapping != MAP_FAILED else {
                throw JournalError(code: .io, message: "cannot read the journal: \(FileIOError("mmap", path))")
            }
            defer { munmap(mapping, size) }
            let live = state.index.lazy.filter { $0.value.offset + $0.value.length <= size }.sorted { $0.value.offset < $1.value.offset }
            return try body(LiveValues(entries: live, file: UnsafeRawBufferPointer(start: mapping, count: size)))
        }
    }

    /// The live keys and where their values lie in the mapped file, valid during `withLiveValues`.
    ///
    /// `@unchecked Sendable`: nothing in it changes, and the mapping outlives every reader.
    public struct LiveValues: @unchecked Sendable {
        fileprivate let entries: [(key: IndexKey, value: Location)]
        fileprivate let file: UnsafeRawBufferPointer

        public var count: Int { entries.count }
        public func key(_ index: Int) -> String { entries[index].key.key }

        /// The id of a job's key (`job/<id>`), without building the key; nil for any other key.
        public func jobID(_ index: Int) -> String? { entries[index].key.jobID }

        public func value(_ index: Int) -> UnsafeRawBufferPointer {
            let location = entries[index].value
            return UnsafeRawBufferPointer(rebasing: file[location.offset..<(location.offset + location.length)])
        }
    }

    /// The latest value of `key`, counting changes queued but not yet on disk; nil when the key
    /// is deleted or was never written.
    public func value(forKey key: String) -> [UInt8]? {
        state.withLock { state in
            // The newest change wins: those queued, then those being written, then the file.
            if let change = Self.latestChange(of: key, in: state.pending) ?? Self.latestChange(of: key, in: state.writing) {
                guard case .put(_, let value) = change else { return nil }
                return value
            }
            return state.index[IndexKey(key)].flatMap { Self.read($0, from: state.fd) }
        }
    }

    /// The value at `location` of the file open as `fd`; nil when it cannot be read (a failure
    /// the next write or sync reports).
    private static func read(_ location: Location, from fd: Int32) -> [UInt8]? {
        var value = [UInt8](repeating: 0, count: location.length)
        var done = 0
        while done < location.length {
            let count = value.withUnsafeMutableBytes { buffer -> Int in
                // Never nil here (the loop runs only for a value of 1 byte or more).
                guard let base = buffer.baseAddress else {
                    errno = EIO
                    return -1
                }
                return pread(fd, base + done, location.length - done, off_t(location.offset + done))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            done += count
        }
        return value
    }

    private static func latestChange(of key: String, in changes: [Change]) -> Change? {
        changes.last { change in
            switch change {
            case .put(key, _), .delete(key): return true
            default: return false
            }
        }
    }
}
