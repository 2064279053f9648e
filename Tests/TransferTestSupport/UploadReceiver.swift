import Crypto
import NIOCore
import NIOHTTP1
import Synchronization

/// The upload paths of a ``TestHTTPServer`` and what they received, behind one lock.
final class UploadPaths: Sendable {
    private struct Entry {
        var behaviour: UploadBehaviour
        var dropsLeft: Int
        var statusesLeft: Int
        var silencesLeft: Int
    }

    private struct Storage {
        var entries: [String: Entry] = [:]
        var received: [String: [ReceivedUpload]] = [:]
    }

    private let storage = Mutex(Storage())

    func register(_ path: String, behaviour: UploadBehaviour) {
        storage.withLock {
            $0.entries[path] = Entry(behaviour: behaviour, dropsLeft: behaviour.drop?.times ?? 0, statusesLeft: behaviour.forcedStatus?.times ?? 0,
                silencesLeft: behaviour.silentTimes)
        }
    }

    func received(for path: String) -> [ReceivedUpload] {
        storage.withLock { $0.received[path] ?? [] }
    }

    /// A receiver for a PUT, POST or PATCH to an upload path; nil for anything else.
    func begin(_ head: HTTPRequestHead) -> UploadReceiver? {
        guard [.PUT, .POST, .PATCH].contains(head.method) else { return nil }
        let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        return storage.withLock { storage in
            guard var entry = storage.entries[path] else { return nil }
            var upload = ReceivedUpload(method: head.method.rawValue, path: path, headers: head.headers.map { ($0.name, $0.value) })
            var refusal: (Int, String?)?
            let length = head.headers.first(name: "Content-Length").flatMap { Int64($0) }
            var dropAt: Int64?
            var silent = false
            if entry.behaviour.requiresContentLength, length == nil {
                refusal = (411, nil)
            } else if let max = entry.behaviour.maxBodyBytes, (length ?? 0) > max {
                refusal = (413, nil)
            } else if let forced = entry.behaviour.forcedStatus, entry.statusesLeft > 0 {
                entry.statusesLeft -= 1
                refusal = (forced.code, forced.retryAfter)
            } else if let drop = entry.behaviour.drop, entry.dropsLeft > 0 {
                entry.dropsLeft -= 1
                dropAt = drop.bytes
            } else if entry.silencesLeft > 0 {
                entry.silencesLeft -= 1
                silent = true
            }
            storage.entries[path] = entry
            upload.status = nil
            let index = storage.received[path, default: []].count
            storage.received[path, default: []].append(upload)
            return UploadReceiver(paths: self, path: path, index: index, refusal: refusal, dropAt: dropAt, silent: silent)
        }
    }

    fileprivate func update(_ path: String, _ index: Int, _ change: (inout ReceivedUpload) -> Void) {
        storage.withLock { storage in
            guard var list = storage.received[path], list.indices.contains(index) else { return }
            change(&list[index])
            storage.received[path] = list
        }
    }
}

/// One upload body arriving: counted and hashed as it streams, never held.
final class UploadReceiver {
    let paths: UploadPaths
    let path: String
    let index: Int
    let refusal: (Int, String?)?
    let dropAt: Int64?
    /// Whether the body is taken without an answer.
    let silent: Bool
    private var hasher = SHA256()
    private var bytes: Int64 = 0

    init(paths: UploadPaths, path: String, index: Int, refusal: (Int, String?)?, dropAt: Int64?, silent: Bool) {
        self.silent = silent
        self.paths = paths
        self.path = path
        self.index = index
        self.refusal = refusal
        self.dropAt = dropAt
    }

    /// Takes body bytes; false when the connection must be dropped now.
    func receive(_ buffer: ByteBuffer) -> Bool {
        var buffer = buffer
        if let dropAt, bytes + Int64(buffer.readableBytes) >= dropAt {
            let wanted = Int(max(0, dropAt - bytes))
            if let part = buffer.readSlice(length: wanted) { take(part) }
            paths.update(path, index) { $0.bytes = self.bytes }
            return false
        }
        take(buffer)
        return true
    }

    private func take(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { hasher.update(bufferPointer: $0) }
        bytes += Int64(buffer.readableBytes)
    }

    /// The body ended: the answer's status, headers and body; nil when none is to be sent.
    func finish() -> (status: Int, headers: HTTPHeaders, body: String)? {
        let digest = hasher.finalize().map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }.joined()
        let status = refusal?.0 ?? 201
        paths.update(path, index) { upload in
            upload.bytes = self.bytes
            upload.sha256 = digest
            upload.status = self.silent ? nil : status
        }
        guard !silent else { return nil }
        var headers = HTTPHeaders()
        if let retryAfter = refusal?.1 { headers.add(name: "Retry-After", value: retryAfter) }
        // A 401 is a login challenge, which a client answers by sending the request again.
        if refusal?.0 == 401 { headers.add(name: "WWW-Authenticate", value: "Basic realm=\"test uploads\"") }
        guard refusal == nil else {
            return (status, headers, "upload refused by the test server with \(status)\n")
        }
        headers.add(name: "Location", value: "\(path)/stored/\(index + 1)")
        headers.add(name: "ETag", value: "\"\(digest.prefix(16))\"")
        headers.add(name: "Content-Type", value: "application/json")
        return (status, headers, "{\"bytes\":\(bytes),\"sha256\":\"\(digest)\"}")
    }
}
