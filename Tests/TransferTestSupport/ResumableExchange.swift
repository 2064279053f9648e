import NIOCore
import NIOHTTP1

/// An answer to one request: status, headers and a (small) body.
typealias ResumableAnswer = (status: Int, headers: HTTPHeaders, body: String)

/// What to do with one request to a resumable path, decided from its head.
struct ResumablePlan {
    /// How the final answer is made once the body has ended.
    enum Final {
        /// Decided already; any body is read and thrown away.
        case fixed(ResumableAnswer)
        case tusCreated
        case tusAppended
        case ietfCreated(complete: Bool)
        case ietfAppended(complete: Bool)
        /// An IETF creation path taking a body without `Upload-Complete`.
        case plain
    }

    var tus: Bool
    /// Interim (1xx) responses to send at once.
    var interim: [(status: Int, headers: HTTPHeaders)] = []
    /// The resource the request concerns, when it exists.
    var resource: String?
    /// `http://host:port/...` of the resource, for `Location`.
    var location: String?
    var append: AppendPlan?
    var final: Final
    /// ``ResumableBehaviour/withholdLastByte``: the append's last byte is dropped once it ended.
    var withholdsLastByte = false
}

/// An append of the request body to a resource.
struct AppendPlan {
    /// The resource's ownership token for this request.
    var token: UInt64
    /// The method as logged in the record, e.g. `PATCH`.
    var label: String
    /// The offset the body starts at.
    var start: Int64
    /// Where the upload ends (its declared length), when known: nothing is kept past it.
    var limit: Int64?
    /// The body bytes after which the connection is dropped (``ResumableBehaviour/dropAfter(bytes:times:)``).
    var dropAt: Int64?
    /// The body bytes after which the rest is thrown away and no answer is sent
    /// (``ResumableBehaviour/stallAtOffset(_:times:)``).
    var stallAt: Int64?
    var rule: CompletionRule
}

/// One request to a resumable path or resource: planned at its head, fed its body as it streams
/// (each chunk written to the resource's file, never held), answered at its end.
final class ResumableExchange {
    private let store: ResumableUploadStore
    let plan: ResumablePlan
    /// Body bytes of this request taken (up to a drop's cut).
    private var arrived: Int64 = 0
    private var kept: Int64 = 0
    private var overflowed = false
    private var ended = false
    /// The request stalled: nothing more is kept, and it gets no answer.
    private(set) var stalled = false

    init(store: ResumableUploadStore, plan: ResumablePlan) {
        self.store = store
        self.plan = plan
    }

    /// Takes body bytes; false when the connection must be closed now (a drop, or a takeover).
    func receive(_ buffer: ByteBuffer) -> Bool {
        if stalled { return true }
        guard let append = plan.append, let resource = plan.resource, !ended else {
            if let resource = plan.resource { store.countDiscarded(buffer.readableBytes, for: resource) }
            return true
        }
        var buffer = buffer
        var cut = false
        var stall = false
        if let stallAt = append.stallAt, arrived + Int64(buffer.readableBytes) >= stallAt {
            buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(max(0, stallAt - arrived))) ?? ByteBuffer()
            stall = true
        }
        if let dropAt = append.dropAt, arrived + Int64(buffer.readableBytes) >= dropAt {
            buffer = buffer.getSlice(at: buffer.readerIndex, length: Int(max(0, dropAt - arrived))) ?? ByteBuffer()
            cut = true
        }
        arrived += Int64(buffer.readableBytes)
        switch store.append(buffer, to: resource, token: append.token, limit: append.limit) {
        case .superseded:
            end(note: "superseded", rule: .never)
            return false
        case .appended(let count, let over):
            kept += count
            overflowed = overflowed || over
        }
        if stall {
            end(note: "stalled", rule: .never)
            stalled = true
            return true
        }
        if cut {
            end(note: "dropped", rule: plan.tus ? .atDeclaredLength : .never)
            return false
        }
        return true
    }

    /// The connection ended before the body did: keep what arrived.
    func abort() {
        guard plan.append != nil, !ended else { return }
        end(note: "aborted", rule: plan.tus ? .atDeclaredLength : .never)
    }

    /// The body ended: the final answer.
    func finish() -> ResumableAnswer {
        var answer = finalAnswer()
        if plan.tus { answer.headers.replaceOrAdd(name: "Tus-Resumable", value: "1.0.0") }
        return answer
    }

    private func finalAnswer() -> ResumableAnswer {
        guard let append = plan.append else {
            if case .fixed(let answer) = plan.final { return answer }
            return (500, HTTPHeaders(), "no plan\n")
        }
        let rule: CompletionRule = overflowed ? .never : append.rule
        guard let record = end(note: overflowed ? "overflow" : nil, rule: rule) else {
            return (404, HTTPHeaders(), "the upload is gone\n")
        }
        if overflowed { return (400, HTTPHeaders(), "body goes past Upload-Length\n") }
        var headers = HTTPHeaders()
        let location = plan.location ?? ""
        switch plan.final {
        case .fixed(let answer):
            return answer
        case .tusCreated:
            headers.add(name: "Location", value: location)
            headers.add(name: "Upload-Offset", value: String(record.offset))
            return (201, headers, "")
        case .tusAppended:
            var offset = record.offset
            if plan.withholdsLastByte, kept > 0, let resource = plan.resource, let cut = store.withholdLastByte(of: resource) {
                offset = cut
            }
            headers.add(name: "Upload-Offset", value: String(offset))
            return (204, headers, "")
        case .ietfCreated(let complete), .ietfAppended(let complete):
            var created = false
            if case .ietfCreated = plan.final {
                created = true
                headers.add(name: "Location", value: location)
            }
            headers.add(name: "Upload-Offset", value: String(record.offset))
            guard complete else {
                headers.add(name: "Upload-Complete", value: "?0")
                return (created ? 201 : 204, headers, "")
            }
            guard record.complete else {
                return (400, headers, "Upload-Complete: ?1 but the bytes held differ from Upload-Length\n")
            }
            headers.add(name: "Upload-Complete", value: "?1")
            return Self.completed(record, headers: headers)
        case .plain:
            headers.add(name: "Location", value: location)
            return Self.completed(record, headers: headers)
        }
    }

    /// 201 with the JSON body naming the upload's SHA-256 and size.
    private static func completed(_ record: ResumableUploadRecord, headers: HTTPHeaders) -> ResumableAnswer {
        var headers = headers
        headers.add(name: "Content-Type", value: "application/json")
        return (201, headers, "{\"sha256\":\"\(record.sha256 ?? "")\",\"bytes\":\(record.offset)}")
    }

    /// Ends the append once: logs it, completes and hashes the upload as `rule` says.
    @discardableResult
    private func end(note: String?, rule: CompletionRule) -> ResumableUploadRecord? {
        guard !ended, let append = plan.append, let resource = plan.resource else { return nil }
        ended = true
        var request = append.label
        if kept > 0 { request += " \(append.start)-\(append.start + kept - 1)" }
        if let note { request += " " + note }
        guard let ending = store.endAppend(resource, token: append.token, request: request, rule: rule) else { return nil }
        guard ending.justCompleted else { return ending.record }
        return store.hashCompleted(resource) ?? ending.record
    }
}

extension HTTPRequestHandler {
    /// `host:port` of the channel's local address, for `Location` when a request has no `Host`.
    static func authority(of channel: any Channel) -> String {
        guard let address = channel.localAddress, let ip = address.ipAddress else { return "127.0.0.1" }
        let host = ip.contains(":") ? "[\(ip)]" : ip
        return address.port.map { "\(host):\($0)" } ?? host
    }
}
