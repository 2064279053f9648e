import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Everything a ``TestHTTPServer`` knows, behind one lock: the registered paths and their counters,
/// the request log, body bytes sent, and the open connections.
final class ServerState: Sendable {
    /// One registered path.
    private struct Entry {
        var content: TestContent
        var replacement: TestContent?
        var behaviour: Behaviour
        var requestCount = 0
        var dropsLeft: Int
    }

    private struct Storage {
        var entries: [String: Entry] = [:]
        var log: [RecordedRequest] = []
        var bytesSent: [String: Int64] = [:]
        var connections: [ObjectIdentifier: any Channel] = [:]
        var closing = false
    }

    private let storage = Mutex(Storage())
    /// The paths that take uploads, and what they received.
    let uploads = UploadPaths()
    /// The paths that take resumable uploads (tus, IETF), and their uploads.
    let resumable = ResumableUploadStore()

    /// Seconds since 1970 of the Last-Modified of original content; a replacement is a day later.
    private static let baseModificationTime: Int64 = 1_700_000_000

    func register(_ path: String, content: TestContent, behaviour: Behaviour) {
        let replacement = behaviour.changeETagAfterRequests == nil ? nil : content.replacement
        let entry = Entry(
            content: content, replacement: replacement, behaviour: behaviour,
            dropsLeft: behaviour.drop?.times ?? 0
        )
        storage.withLock { $0.entries[path] = entry }
    }

    func unregister(_ path: String) {
        storage.withLock { $0.entries[path] = nil }
    }

    func content(for path: String) -> TestContent? {
        storage.withLock { storage in
            guard let entry = storage.entries[path] else { return nil }
            if let after = entry.behaviour.changeETagAfterRequests, entry.requestCount > after,
                let replacement = entry.replacement
            {
                return replacement
            }
            return entry.content
        }
    }

    func requests(for path: String?) -> [RecordedRequest] {
        storage.withLock { storage in
            guard let path else { return storage.log }
            return storage.log.filter { $0.path == path }
        }
    }

    func bytesSent(for path: String) -> Int64 {
        storage.withLock { $0.bytesSent[path] ?? 0 }
    }

    func addBytesSent(_ count: Int64, for path: String) {
        storage.withLock { $0.bytesSent[path, default: 0] += count }
    }

    /// Remembers an open connection; false (and not remembered) once the server is shutting down.
    func track(_ channel: any Channel) -> Bool {
        storage.withLock { storage in
            guard !storage.closing else { return false }
            storage.connections[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func untrack(_ channel: any Channel) {
        _ = storage.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Marks the server as shutting down and returns the connections still open.
    func beginClosing() -> [any Channel] {
        storage.withLock { storage in
            storage.closing = true
            return Array(storage.connections.values)
        }
    }

    /// Records `head` in the request log (for requests answered elsewhere, e.g. resumable uploads).
    func log(_ head: HTTPRequestHead) {
        let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let record = RecordedRequest(method: head.method.rawValue, uri: head.uri, path: path, headers: head.headers.map { ($0.name, $0.value) })
        storage.withLock { $0.log.append(record) }
    }

    /// Records `head` and decides the answer, updating the path's counters.
    func plan(for head: HTTPRequestHead) -> ResponsePlan {
        let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let record = RecordedRequest(
            method: head.method.rawValue, uri: head.uri, path: path,
            headers: head.headers.map { ($0.name, $0.value) }
        )
        return storage.withLock { storage in
            storage.log.append(record)
            guard var entry = storage.entries[path] else { return .empty(404) }
            entry.requestCount += 1
            defer { storage.entries[path] = entry }
            return Self.plan(for: head, path: path, entry: &entry)
        }
    }

    private static func plan(for head: HTTPRequestHead, path: String, entry: inout Entry) -> ResponsePlan {
        let behaviour = entry.behaviour
        if let redirect = behaviour.redirect {
            let location: String
            switch redirect.target {
            case .location(let target):
                location = target
            case .itself:
                location = head.headers.first(name: "host").map { "http://\($0)\(head.uri)" } ?? head.uri
            }
            return .empty(redirect.status, headers: [("Location", location)])
        }
        if let forced = behaviour.forcedStatus, entry.requestCount <= forced.times {
            return .empty(forced.code, headers: forced.retryAfter.map { [("Retry-After", $0)] } ?? [])
        }
        guard head.method == .GET || head.method == .HEAD else {
            return .empty(405, headers: [("Allow", "GET, HEAD")])
        }

        var content = entry.content
        var modified = baseModificationTime + Int64(content.seed % 1_000_000)
        if let after = behaviour.changeETagAfterRequests, entry.requestCount > after,
            let replacement = entry.replacement
        {
            content = replacement
            modified += 86_400
        }
        let total = content.size
        let opaqueTag = "\"\(content.seed)-\(total)\""
        let etag = behaviour.weakETag ? "W/\(opaqueTag)" : opaqueTag
        let lastModified = behaviour.weakETag ? nil : HTTPDate.format(unixSeconds: modified)

        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/octet-stream")
        headers.add(name: "ETag", value: etag)
        if let lastModified {
            headers.add(name: "Last-Modified", value: lastModified)
        }
        if !behaviour.ignoresRange {
            headers.add(name: "Accept-Ranges", value: "bytes")
        }

        var status = HTTPResponseStatus.ok
        var range: Range<Int64> = 0..<total
        if !behaviour.ignoresRange, let rangeHeader = head.headers.first(name: "range"),
            let requested = ByteRangeRequest(headerValue: rangeHeader),
            ifRangeAllows(head.headers.first(name: "if-range"), etag: etag, lastModified: lastModified)
        {
            guard let selected = requested.resolve(total: total) else {
                var unsatisfiable = ResponsePlan.empty(416, headers: [("Content-Range", "bytes */\(total)")])
                unsatisfiable.headers.add(name: "ETag", value: etag)
                return unsatisfiable
            }
            var start = selected.lowerBound
            var end = selected.upperBound
            if let shift = behaviour.rangeShift {
                start = min(max(start + shift, 0), total - 1)
                end = min(start + (selected.upperBound - selected.lowerBound), total - 1)
            }
            status = .partialContent
            range = start..<(end + 1)
            headers.add(name: "Content-Range", value: "bytes \(start)-\(end)/\(total)")
        }
        if behaviour.gzip {
            headers.add(name: "Content-Encoding", value: "gzip")
        }
        if let announced = behaviour.announcedDigest, announced.header.lowercased() != "content-digest" || status == .ok {
            let source = announced.correct ? content : content.replacement
            let bytes = announced.algorithm == "sha-512" ? source.digest(SHA512.self) : source.digest(SHA256.self)
            headers.add(name: announced.header, value: "\(announced.algorithm)=:\(Data(bytes).base64EncodedString()):")
        }
        let lie = behaviour.extraContentLength ?? 0
        headers.add(name: "Content-Length", value: "\(range.length + lie)")

        var plan = ResponsePlan(status: status, headers: headers, body: nil)
        plan.closeConnection = behaviour.extraContentLength != nil
        guard head.method == .GET, !range.isEmpty else { return plan }

        var cutAfter: Int64?
        if let drop = behaviour.drop, entry.dropsLeft > 0, range.length > drop.bytes {
            entry.dropsLeft -= 1
            cutAfter = drop.bytes
        }
        plan.body = BodyPlan(
            path: path, content: content, range: range, cutAfter: cutAfter,
            closeAfterBody: behaviour.extraContentLength != nil, bytesPerSecond: behaviour.trickleRate,
            hold: behaviour.hold
        )
        return plan
    }

    /// Whether a range may be served given the request's `If-Range` (strong comparison only).
    private static func ifRangeAllows(_ ifRange: String?, etag: String, lastModified: String?) -> Bool {
        guard let validator = ifRange?.trimmingSpaces() else { return true }
        if validator.hasPrefix("W/") || etag.hasPrefix("W/") {
            return false
        }
        if validator.hasPrefix("\"") {
            return validator == etag
        }
        return validator == lastModified
    }
}
