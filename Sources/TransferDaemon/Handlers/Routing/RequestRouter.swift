import Foundation
import Logging
import NIOCore
import TransferCore
import TransferFraming
import TransferProtocol

/// Who is on the other end of a connection, from `SO_PEERCRED`.
struct Peer: Sendable {
    var uid: UInt32
    var pid: Int32
    var gid: UInt32? = nil
}

/// Reads one JSON-RPC request line, calls the method's handler, and writes the response line.
/// Handlers live one per method, in `<Method>Handler.swift`.
struct RequestRouter: Sendable {
    let manager: TransferManager
    let configuration: LiveConfiguration
    /// Serves `reload`, as SIGHUP does.
    let reloader: ConfigurationReloader
    let logger: Logger
    /// Pipelined submits, gathered into batches.
    let submits: SubmitCoalescer

    init(manager: TransferManager, configuration: LiveConfiguration, reloader: ConfigurationReloader, logger: Logger) {
        self.manager = manager
        self.configuration = configuration
        self.reloader = reloader
        self.logger = logger
        submits = SubmitCoalescer(manager: manager)
    }

    /// One request line, read as far as the router needs to decide how to run it.
    enum Prepared: Sendable {
        /// Answered already (a line too long, not JSON, not a request): the answer, if any.
        case answered(ByteBuffer?)
        /// A single request.
        case request(DecodedRequest)
        /// A batch (a JSON array of requests).
        case batch(Data)

        /// Whether it may run beside the requests before and after it on its connection: only
        /// submits, which order nothing, so pipelined submits share the journal's syncs.
        var runsConcurrently: Bool {
            if case .request(let request) = self { return request.method == Submit.name }
            return false
        }
    }

    /// Reads a request line as far as its method.
    func prepare(_ frame: LineFrame) -> Prepared {
        switch frame {
        case .tooLong(let limit):
            let refusal = RequestDecoder.lineTooLong(limit: limit)
            return .answered(encodeFailure(id: refusal.id, refusal.error))
        case .line(let buffer):
            let data = Data(buffer.readableBytesView)
            if RequestBatch.isBatch(data) { return .batch(data) }
            do {
                return .request(try RequestDecoder(methods: Self.methods, maxDepth: configuration.current.maxJsonDepth).decode(data))
            } catch {
                return .answered(encodeFailure(id: error.id, error.error))
            }
        }
    }

    /// The response line (newline included) for one request line, or nil for a notification.
    func respond(to frame: LineFrame, from peer: Peer, subscriptions: ConnectionSubscriptions) async -> ByteBuffer? {
        await respond(to: prepare(frame), from: peer, subscriptions: subscriptions)
    }

    /// The response line (newline included) for a prepared request line, or nil for a notification.
    func respond(to prepared: Prepared, from peer: Peer, subscriptions: ConnectionSubscriptions) async -> ByteBuffer? {
        switch prepared {
        case .answered(let answer):
            return answer
        case .batch(let data):
            return await respond(toBatch: data, from: peer, subscriptions: subscriptions)
        case .request(let request):
            let response = await dispatch(request, peer: peer, subscriptions: subscriptions)
            // A notification (no id) gets no answer, as JSON-RPC requires.
            return request.id == nil ? nil : response
        }
    }

    static let methods = [
        Submit.name, Status.name, Log.name, Cancel.name, Pause.name, Resume.name, Remove.name, Clean.name, Retry.name, Subscribe.name,
        Unsubscribe.name, Ack.name, PriorityMethod.name, Move.name,
        Version.name, Reload.name, MetricsMethod.name,
    ]

    func dispatch(_ request: DecodedRequest, peer: Peer, subscriptions: ConnectionSubscriptions) async -> ByteBuffer {
        let id = request.id ?? .null
        switch request.method {
        case Submit.name: return await call(Submit.self, id, request) { (params) async throws(RPCError) in try await submit(params, peer: peer) }
        case Status.name: return await call(Status.self, id, request) { (params) async throws(RPCError) in try await status(params, peer: peer) }
        case Log.name: return await call(Log.self, id, request) { (params) async throws(RPCError) in try await log(params, peer: peer) }
        case Cancel.name: return await call(Cancel.self, id, request) { (params) async throws(RPCError) in try await cancel(params, peer: peer) }
        case Pause.name: return await call(Pause.self, id, request) { (params) async throws(RPCError) in try await pause(params, peer: peer) }
        case Resume.name: return await call(Resume.self, id, request) { (params) async throws(RPCError) in try await resume(params, peer: peer) }
        case PriorityMethod.name:
            return await call(PriorityMethod.self, id, request) { (params) async throws(RPCError) in try await priority(params, peer: peer) }
        case Move.name: return await call(Move.self, id, request) { (params) async throws(RPCError) in try await move(params, peer: peer) }
        case Remove.name: return await call(Remove.self, id, request) { (params) async throws(RPCError) in try await remove(params, peer: peer) }
        case Clean.name: return await call(Clean.self, id, request) { (params) async throws(RPCError) in try await clean(params, peer: peer) }
        case Retry.name: return await call(Retry.self, id, request) { (params) async throws(RPCError) in try await retry(params, peer: peer) }
        case Subscribe.name:
            return await call(Subscribe.self, id, request) { (params) async throws(RPCError) in
                try await subscribe(params, peer: peer, subscriptions: subscriptions)
            }
        case Unsubscribe.name:
            return await call(Unsubscribe.self, id, request) { (params) async throws(RPCError) in
                try unsubscribe(params, subscriptions: subscriptions)
            }
        case Ack.name: return await call(Ack.self, id, request) { (params) async throws(RPCError) in try await ack(params, peer: peer) }
        case Version.name: return await call(Version.self, id, request) { (params) async throws(RPCError) in try await version(params, peer: peer) }
        case MetricsMethod.name:
            return await call(MetricsMethod.self, id, request) { (params) async throws(RPCError) in try await metrics(params, peer: peer) }
        case Reload.name: return await call(Reload.self, id, request) { (params) async throws(RPCError) in try await reload(params, peer: peer) }
        default:
            return encodeFailure(
                id: id,
                RPCError(.methodNotFound, "unknown method '\(request.method.prefix(100))': the methods are \(Self.methods.joined(separator: ", "))"))
        }
    }

    private func call<M: RPCMethod>(
        _ method: M.Type, _ id: RPCID, _ request: DecodedRequest,
        _ handler: (M.Params) async throws(RPCError) -> M.Result
    ) async -> ByteBuffer {
        do {
            let params = try request.params(for: M.self)
            return encodeSuccess(id: id, try await handler(params))
        } catch {
            return encodeFailure(id: id, error)
        }
    }

    func encodeSuccess<R: Codable & Sendable>(id: RPCID, _ result: R) -> ByteBuffer {
        WireLine.encode(RPCSuccess(id: id, result: result)) ?? encodeFailure(id: id, RPCError(.internalError, "the result could not be encoded"))
    }

    func encodeFailure(id: RPCID, _ error: RPCError) -> ByteBuffer {
        if let line = WireLine.encode(RPCFailure(id: id, error: error)) { return line }
        return ByteBuffer(string: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"# + "\n")
    }
}
