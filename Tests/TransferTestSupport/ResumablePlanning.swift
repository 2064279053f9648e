import NIOCore
import NIOHTTP1
import Synchronization

/// The largest upload either protocol accepts (advertised as `Tus-Max-Size` and `Upload-Limit`).
let resumableMaxSize: Int64 = 17_179_869_184

/// One request to a resumable path, as the planners see it.
struct ResumableRequest {
    let head: HTTPRequestHead
    let route: ResumableUploadStore.Route
    /// `http://host:port` the client used (its `Host`), for `Location`.
    let origin: String
    let behaviour: ResumableBehaviour

    var method: HTTPMethod { head.method }
    var contentLength: Int64? { head.headers.first(name: "Content-Length").flatMap(parseNonNegative) }
    /// Whether a body is announced: a `Content-Length` above 0, or a chunked one.
    var hasBody: Bool {
        (contentLength ?? 0) > 0
            || head.headers[canonicalForm: "Transfer-Encoding"].contains { $0.lowercased() == "chunked" }
    }
    /// The media type of `Content-Type`, lowercased and without parameters.
    var mediaType: String? {
        head.headers.first(name: "Content-Type").map {
            String($0.split(separator: ";", maxSplits: 1).first ?? "").trimmingSpaces().lowercased()
        }
    }
    func header(_ name: String) -> String? { head.headers.first(name: name)?.trimmingSpaces() }
}

/// A non-negative decimal integer (digits only, as both protocols require), or nil.
func parseNonNegative(_ text: String) -> Int64? {
    let text = text.trimmingSpaces()
    guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
    return Int64(text)
}

/// A structured-field boolean (`?0` / `?1`), or nil.
func parseBoolean(_ text: String?) -> Bool? {
    switch text?.trimmingSpaces() {
    case "?1": true
    case "?0": false
    default: nil
    }
}

/// An answer with `headers` and a short text body saying why.
func resumableAnswer(_ status: Int, _ headers: [(String, String)] = [], _ why: String = "") -> ResumableAnswer {
    (status, HTTPHeaders(headers), why.isEmpty ? "" : why + "\n")
}

extension ResumableUploadStore {
    /// Plans a request when its path (query ignored) is a registered resumable path or one of its
    /// resources; nil otherwise. Counts the request against the path's switches.
    func plan(for head: HTTPRequestHead, fallbackAuthority: String) -> ResumablePlan? {
        let path = String(head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let authority = head.headers.first(name: "Host") ?? fallbackAuthority
        return storage.withLock { storage in
            guard let route = Self.route(path, in: storage) else { return nil }
            let base: String
            var resource: String?
            switch route {
            case .creation(let path): base = path
            case .resource(let path, let path2):
                base = path
                resource = storage.resources[path2] == nil ? nil : path2
            }
            guard var entry = storage.paths[base] else { return nil }
            let tus = entry.protocolUsed == .tus
            // Forced statuses come before anything else, OPTIONS excepted so that discovery works.
            if head.method != .OPTIONS, let forced = entry.behaviour.forcedStatus, entry.statusesLeft > 0 {
                entry.statusesLeft -= 1
                storage.paths[base] = entry
                if let resource { storage.resources[resource]?.record.requests.append("\(head.method.rawValue) \(forced.code)") }
                let answer = resumableAnswer(forced.code, forced.retryAfter.map { [("Retry-After", $0)] } ?? [], "forced by the test server")
                return ResumablePlan(tus: tus, resource: resource, final: .fixed(answer))
            }
            let request = ResumableRequest(head: head, route: route, origin: "http://\(authority)", behaviour: entry.behaviour)
            var plan =
                tus
                ? Self.planTus(request, storage: &storage, directory: directory)
                : Self.planIETF(request, storage: &storage, directory: directory)
            if plan.resource == nil { plan.resource = resource }
            if head.headers.first(name: "Expect")?.lowercased() == "100-continue" {
                plan.interim.append((100, HTTPHeaders()))
            }
            return plan
        }
    }
}

extension ResumableUploadStore.Storage {
    /// An append of `request`'s body to `resource` (created under `path`) from `start`: it takes
    /// the resource over and carries the drop or stall due.
    mutating func appendPlan(
        _ resource: String, under path: String, label: String, start: Int64, limit: Int64?, request: ResumableRequest,
        rule: CompletionRule
    ) -> AppendPlan {
        AppendPlan(
            token: claim(resource), label: label, start: start, limit: limit,
            dropAt: takeDrop(path, hasBody: request.hasBody, length: request.contentLength, start: start),
            stallAt: takeStall(path, hasBody: request.hasBody, length: request.contentLength, start: start), rule: rule)
    }

    /// The drop due for an append to `path` that carries a body and starts at `start`, counting
    /// it: a cut after a number of the request's bytes, or where the upload reaches an offset.
    mutating func takeDrop(_ path: String, hasBody: Bool, length: Int64?, start: Int64) -> Int64? {
        guard hasBody else { return nil }
        if let drop = paths[path]?.behaviour.drop, let left = paths[path]?.dropsLeft, left > 0 {
            paths[path]?.dropsLeft = left - 1
            return drop.bytes
        }
        if let cut = paths[path]?.behaviour.dropAtOffset, let left = paths[path]?.offsetDropsLeft, left > 0,
            Self.crosses(cut.offset, start: start, length: length)
        {
            paths[path]?.offsetDropsLeft = left - 1
            return cut.offset - start
        }
        return nil
    }

    /// Whether a body of `length` bytes (unknown: chunked) written from `start` carries the upload past `offset`.
    static func crosses(_ offset: Int64, start: Int64, length: Int64?) -> Bool {
        offset > start && (length.map { start + $0 > offset } ?? true)
    }

    /// Where an append to `path` starting at `start` stops being read (``ResumableBehaviour/stallAtOffset(_:times:)``), counting it.
    mutating func takeStall(_ path: String, hasBody: Bool, length: Int64?, start: Int64) -> Int64? {
        guard hasBody, let stall = paths[path]?.behaviour.stallAtOffset, let left = paths[path]?.stallsLeft, left > 0,
            Self.crosses(stall.offset, start: start, length: length)
        else { return nil }
        paths[path]?.stallsLeft = left - 1
        return stall.offset - start
    }

    /// The offset a HEAD of `resource` under `path` reports: understated (and truncated) when due.
    mutating func reportedOffset(_ path: String, resource: String) -> Int64 {
        let held = resources[resource]?.record.offset ?? 0
        guard let understatement = paths[path]?.behaviour.understatement, let left = paths[path]?.understatementsLeft,
            left > 0, let offset = truncate(resource, by: understatement.bytes)
        else { return held }
        paths[path]?.understatementsLeft = left - 1
        return offset
    }

    /// Notes a request answered without a body in the resource's record.
    mutating func note(_ resource: String, _ text: String) {
        resources[resource]?.record.requests.append(text)
    }
}
