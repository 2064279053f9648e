import Crypto
import Foundation
import Glibc
import NIOCore
import Synchronization

/// The resumable-upload paths of a ``TestHTTPServer``, their upload resources and the files holding
/// their bytes, behind one lock.
///
/// Bytes are written to the resource's file under the lock, so that an offset read, a truncation or a
/// takeover by a newer request never races a write (a 64 KiB `pwrite` to the page cache is short).
final class ResumableUploadStore: Sendable {
    /// One registered creation path.
    struct PathEntry {
        var protocolUsed: ResumableProtocol
        var behaviour: ResumableBehaviour
        var dropsLeft: Int
        var offsetDropsLeft = 0
        var stallsLeft = 0
        var understatementsLeft: Int
        var statusesLeft: Int
        /// Resource paths, in creation order.
        var resources: [String] = []
    }

    /// One upload resource.
    struct Resource {
        var record: ResumableUploadRecord
        let file: String
        /// The open file; -1 once terminated.
        var descriptor: Int32
        /// The token of the request appending now, if any; a newer append takes over.
        var appender: UInt64?
        var terminated: Bool { descriptor < 0 }
    }

    struct Storage {
        var paths: [String: PathEntry] = [:]
        var resources: [String: Resource] = [:]
        var nextToken: UInt64 = 1
        var nextFile = 1
    }

    /// Where a request is addressed.
    enum Route {
        /// The creation (or plain upload) target itself.
        case creation(path: String)
        /// An upload resource under `path` (which may not exist).
        case resource(path: String, resource: String)
    }

    /// What one chunk of an append did.
    enum AppendResult {
        /// Kept `kept` bytes; `overflowed` when some went past the declared length and were thrown away.
        case appended(kept: Int64, overflowed: Bool)
        /// Another request took the resource over (or it was terminated): stop reading.
        case superseded
    }

    let storage = Mutex(Storage())
    /// The directory of the held bytes, removed by ``removeAll()``.
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("resumable-\(UUID().uuidString)").path

    func register(_ path: String, protocolUsed: ResumableProtocol, behaviour: ResumableBehaviour) {
        storage.withLock { storage in
            // Registering again replaces the switches and counters but keeps the uploads.
            var entry = PathEntry(
                protocolUsed: protocolUsed, behaviour: behaviour, dropsLeft: behaviour.drop?.times ?? 0,
                understatementsLeft: behaviour.understatement?.times ?? 0,
                statusesLeft: behaviour.forcedStatus?.times ?? 0)
            entry.offsetDropsLeft = behaviour.dropAtOffset?.times ?? 0
            entry.stallsLeft = behaviour.stallAtOffset?.times ?? 0
            entry.resources = storage.paths[path]?.resources ?? []
            storage.paths[path] = entry
        }
    }

    func records(for path: String) -> [ResumableUploadRecord] {
        storage.withLock { storage in
            (storage.paths[path]?.resources ?? []).compactMap { storage.resources[$0]?.record }
        }
    }

    /// The route of a request for `path` (query removed), or nil when it is not a resumable path.
    static func route(_ path: String, in storage: Storage) -> Route? {
        if storage.paths[path] != nil { return .creation(path: path) }
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return nil }
        let parent = String(path[..<slash])
        let last = path[path.index(after: slash)...]
        guard storage.paths[parent] != nil, !last.isEmpty, last.allSatisfy(\.isASCIIDigitCharacter) else { return nil }
        return .resource(path: parent, resource: path)
    }

    /// Drops the last byte `resource` holds (``ResumableBehaviour/withholdLastByte``); the offset after, or nil.
    func withholdLastByte(of resource: String) -> Int64? {
        storage.withLock { $0.truncate(resource, by: 1) }
    }

    /// Closes and deletes every held file (at server shutdown).
    func removeAll() {
        storage.withLock { storage in
            for key in storage.resources.keys where storage.resources[key]?.terminated == false {
                if let descriptor = storage.resources[key]?.descriptor { close(descriptor) }
                storage.resources[key]?.descriptor = -1
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Writes `buffer` at the resource's offset when `token` still owns it, keeping nothing past `limit`.
    func append(_ buffer: ByteBuffer, to resourcePath: String, token: UInt64, limit: Int64?) -> AppendResult {
        storage.withLock { storage in
            guard var resource = storage.resources[resourcePath], !resource.terminated, resource.appender == token else {
                return .superseded
            }
            defer { storage.resources[resourcePath] = resource }
            let count = Int64(buffer.readableBytes)
            resource.record.bodyBytesReceived += count
            let room = limit.map { max(0, $0 - resource.record.offset) } ?? count
            let kept = min(count, room)
            let written = buffer.withUnsafeReadableBytes { bytes in
                Self.writeAll(UnsafeRawBufferPointer(rebasing: bytes[0..<Int(kept)]), to: resource.descriptor, at: resource.record.offset)
            }
            // A failed write (disk full) keeps what was written; the offset says so.
            resource.record.offset += written
            return .appended(kept: written, overflowed: kept < count)
        }
    }

    /// Counts body bytes that were read and thrown away for `resourcePath`.
    func countDiscarded(_ count: Int, for resourcePath: String) {
        storage.withLock { $0.resources[resourcePath]?.record.bodyBytesReceived += Int64(count) }
    }

    /// Ends the append of `token`: notes `request`, completes the upload as `rule` says, and returns
    /// the record, and whether it has just completed (so its hash is due).
    func endAppend(
        _ resourcePath: String, token: UInt64, request: String, rule: CompletionRule
    ) -> (record: ResumableUploadRecord, justCompleted: Bool)? {
        storage.withLock { storage in
            guard var resource = storage.resources[resourcePath] else { return nil }
            defer { storage.resources[resourcePath] = resource }
            resource.record.requests.append(request)
            guard resource.appender == token, !resource.terminated else { return (resource.record, false) }
            resource.appender = nil
            var completes = false
            switch rule {
            case .never:
                break
            case .atDeclaredLength:
                completes = resource.record.declaredLength == resource.record.offset
            case .now:
                completes = resource.record.declaredLength.map { $0 == resource.record.offset } ?? true
            }
            guard completes, !resource.record.complete else { return (resource.record, false) }
            resource.record.complete = true
            resource.record.declaredLength = resource.record.offset
            return (resource.record, true)
        }
    }

    /// Hashes the completed upload at `resourcePath` from its file (outside the lock: a complete upload
    /// is written no more) and stores the result.
    func hashCompleted(_ resourcePath: String) -> ResumableUploadRecord? {
        guard let file = storage.withLock({ $0.resources[resourcePath]?.file }) else { return nil }
        let digest = Self.sha256(ofFile: file)
        return storage.withLock { storage in
            storage.resources[resourcePath]?.record.sha256 = digest
            return storage.resources[resourcePath]?.record
        }
    }

    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64) -> Int64 {
        var done = 0
        while done < bytes.count {
            guard let base = bytes.baseAddress else { break }
            let result = pwrite(descriptor, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { break }
            done += result
        }
        return Int64(done)
    }

    /// The SHA-256 (lowercase hex) of the file at `path`, read 1 MiB at a time; nil when unreadable.
    private static func sha256(ofFile path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var hasher = SHA256()
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            chunk.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finalize().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}

/// When an append completes its upload.
enum CompletionRule {
    /// Never (IETF `Upload-Complete: ?0`).
    case never
    /// When the offset reaches the declared length (tus).
    case atDeclaredLength
    /// Now, if the offset matches the declared length or none was declared (IETF `?1`, plain uploads).
    case now
}

extension ResumableUploadStore.Storage {
    /// Creates the next resource under `path` with its empty file; nil when the file cannot be made.
    mutating func createResource(under path: String, directory: String, declaredLength: Int64?) -> String? {
        guard var entry = paths[path] else { return nil }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let file = "\(directory)/\(nextFile)"
        nextFile += 1
        let descriptor = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        let resourcePath = "\(path)/\(entry.resources.count + 1)"
        let record = ResumableUploadRecord(
            protocolUsed: entry.protocolUsed, resourcePath: resourcePath, declaredLength: declaredLength, offset: 0,
            complete: false, sha256: nil, bodyBytesReceived: 0, requests: [])
        resources[resourcePath] = ResumableUploadStore.Resource(record: record, file: file, descriptor: descriptor)
        entry.resources.append(resourcePath)
        paths[path] = entry
        return resourcePath
    }

    /// Makes a new append of `resourcePath` its owner (taking over from an older one) and returns its token.
    mutating func claim(_ resourcePath: String) -> UInt64 {
        let token = nextToken
        nextToken += 1
        resources[resourcePath]?.appender = token
        return token
    }

    /// Stops the append in flight on `resourcePath`, if any: its next chunk is refused and its connection closed.
    mutating func supersede(_ resourcePath: String) {
        resources[resourcePath]?.appender = nil
    }

    /// Forgets the bytes of `resourcePath` (DELETE); the record stays.
    mutating func terminate(_ resourcePath: String) {
        guard let resource = resources[resourcePath], !resource.terminated else { return }
        close(resource.descriptor)
        unlink(resource.file)
        resources[resourcePath]?.descriptor = -1
        resources[resourcePath]?.appender = nil
    }

    /// Truncates an incomplete, idle `resourcePath` by `bytes` (understateOffset) and returns the new offset.
    mutating func truncate(_ resourcePath: String, by bytes: Int64) -> Int64? {
        guard var resource = resources[resourcePath], !resource.terminated, !resource.record.complete,
            resource.appender == nil
        else { return nil }
        let offset = max(0, resource.record.offset - bytes)
        guard ftruncate(resource.descriptor, off_t(offset)) == 0 else { return nil }
        resource.record.offset = offset
        resources[resourcePath] = resource
        return offset
    }
}

extension Character {
    fileprivate var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}
