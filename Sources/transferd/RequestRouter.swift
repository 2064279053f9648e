import Foundation
import Logging
import NIOCore
import TransferCore
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
    let logger: Logger

    /// The response line (newline included) for one request line, or nil for a notification.
    func respond(to frame: LineFrame, from peer: Peer, subscriptions: ConnectionSubscriptions) async -> ByteBuffer? {
        switch frame {
        case .tooLong(let limit):
            return encodeFailure(
                id: .null,
                RPCError(
                    .requestTooLarge,
                    "the request line is longer than \(limit) bytes (max_request_bytes) and was ignored: send smaller requests, one JSON object per line"))
        case .line(let buffer):
            let data = Data(buffer.readableBytesView)
            let header: RPCRequestHeader
            do {
                header = try WireCoding.decoder().decode(RPCRequestHeader.self, from: data)
            } catch DecodingError.dataCorrupted {
                return encodeFailure(id: .null, RPCError(.parseError, "the request is not valid JSON: send one JSON-RPC 2.0 object per line"))
            } catch {
                return encodeFailure(id: .null, RPCError(.invalidRequest, "the request must be a JSON object with jsonrpc, id, method and params"))
            }
            let id = header.id ?? .null
            guard header.jsonrpc == "2.0" else {
                return encodeFailure(id: id, RPCError(.invalidRequest, "the request must carry \"jsonrpc\": \"2.0\""))
            }
            guard let method = header.method else {
                return encodeFailure(id: id, RPCError(.invalidRequest, "the request has no method: give one of \(Self.methods.joined(separator: ", "))"))
            }
            let response = await dispatch(
                method: method, id: id, data: data, hasParams: header.hasParams, peer: peer, subscriptions: subscriptions)
            // A notification (no id) gets no answer, as JSON-RPC requires.
            return header.id == nil ? nil : response
        }
    }

    static let methods = [Submit.name, Status.name, Cancel.name, Subscribe.name, Unsubscribe.name, Ack.name, Version.name]

    private func dispatch(
        method: String, id: RPCID, data: Data, hasParams: Bool, peer: Peer, subscriptions: ConnectionSubscriptions
    ) async -> ByteBuffer {
        switch method {
        case Submit.name: return await call(Submit.self, id, data, hasParams) { (params) async throws(RPCError) in try await submit(params, peer: peer) }
        case Status.name: return await call(Status.self, id, data, hasParams) { (params) async throws(RPCError) in try await status(params, peer: peer) }
        case Cancel.name: return await call(Cancel.self, id, data, hasParams) { (params) async throws(RPCError) in try await cancel(params, peer: peer) }
        case Subscribe.name:
            return await call(Subscribe.self, id, data, hasParams) { (params) async throws(RPCError) in
                try await subscribe(params, peer: peer, subscriptions: subscriptions)
            }
        case Unsubscribe.name:
            return await call(Unsubscribe.self, id, data, hasParams) { (params) async throws(RPCError) in
                try unsubscribe(params, subscriptions: subscriptions)
            }
        case Ack.name: return await call(Ack.self, id, data, hasParams) { (params) async throws(RPCError) in try await ack(params, peer: peer) }
        case Version.name: return await call(Version.self, id, data, hasParams) { (params) async throws(RPCError) in try await version(params, peer: peer) }
        default:
            return encodeFailure(
                id: id, RPCError(.methodNotFound, "unknown method '\(method.prefix(100))': the methods are \(Self.methods.joined(separator: ", "))"))
        }
    }

    private func call<M: RPCMethod>(
        _ method: M.Type, _ id: RPCID, _ data: Data, _ hasParams: Bool,
        _ handler: (M.Params) async throws(RPCError) -> M.Result
    ) async -> ByteBuffer {
        do {
            let params = try Self.decodeParams(M.self, data, hasParams)
            return encodeSuccess(id: id, try await handler(params))
        } catch {
            return encodeFailure(id: id, error)
        }
    }

    static func decodeParams<M: RPCMethod>(_ method: M.Type, _ data: Data, _ hasParams: Bool) throws(RPCError) -> M.Params {
        do {
            if !hasParams { return try WireCoding.decoder().decode(M.Params.self, from: Data("{}".utf8)) }
            return try WireCoding.decoder().decode(RPCParamsEnvelope<M.Params>.self, from: data).params
        } catch let error as DecodingError {
            throw RPCError(.invalidParams, "invalid params for \(M.name): \(Self.describe(error))")
        } catch {
            throw RPCError(.invalidParams, "invalid params for \(M.name): \(error)")
        }
    }

    /// Names the parameter at fault, in the wire's snake_case.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let keys = (codingPath + (last.map { [$0] } ?? [])).filter { $0.stringValue != "params" }
            let names = keys.map { $0.intValue.map { "[\($0)]" } ?? snakeCase($0.stringValue) }
            return names.isEmpty ? "params" : names.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing parameter '\(path(context.codingPath, key))'"
        case .typeMismatch(let type, let context):
            return "parameter '\(path(context.codingPath))' must be \(typeName(type))"
        case .valueNotFound(let type, let context):
            return "parameter '\(path(context.codingPath))' must be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            return "parameter '\(path(context.codingPath))': \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is UInt32.Type: return "an integer"
        case is [String: String].Type: return "an object of strings"
        default: return type is any Collection.Type ? "an array" : "an object"
        }
    }

    private static func snakeCase(_ name: String) -> String {
        name.reduce(into: "") { result, character in
            if character.isUppercase {
                result += "_" + character.lowercased()
            } else {
                result.append(character)
            }
        }
    }

    private func encodeSuccess<R: Codable & Sendable>(id: RPCID, _ result: R) -> ByteBuffer {
        WireLine.encode(RPCSuccess(id: id, result: result)) ?? encodeFailure(id: id, RPCError(.internalError, "the result could not be encoded"))
    }

    private func encodeFailure(id: RPCID, _ error: RPCError) -> ByteBuffer {
        if let line = WireLine.encode(RPCFailure(id: id, error: error)) { return line }
        return ByteBuffer(string: #"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}"# + "\n")
    }
}
