/// The fields of a JSON-RPC request other than its parameters, read before the method is known.
public struct RPCRequestHeader: Decodable, Sendable {
    public var jsonrpc: String?
    /// The request's id; nil when the member is absent (a notification).
    public var id: RPCID?
    public var method: String?
    /// Whether a `params` member is present.
    public var hasParams: Bool
    /// Whether the id is present but no `RPCID` (a fraction, a boolean, an object, an array, or a
    /// number beyond 64 bits): an answer could not echo it.
    public var hasUnusableID = false

    private enum CodingKeys: String, CodingKey { case jsonrpc, id, method, params }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        jsonrpc = try? container.decode(String.self, forKey: .jsonrpc)
        if container.contains(.id) {
            if let readable = try? container.decode(RPCID.self, forKey: .id) {
                id = readable
            } else {
                id = .null
                hasUnusableID = true
            }
        }
        method = try? container.decode(String.self, forKey: .method)
        hasParams = container.contains(.params)
    }
}

/// A JSON-RPC request with typed parameters.
public struct RPCRequest<Params: Codable & Sendable>: Codable, Sendable {
    public var jsonrpc = "2.0"
    public var id: RPCID
    public var method: String
    public var params: Params

    public init(id: RPCID, method: String, params: Params) {
        self.id = id
        self.method = method
        self.params = params
    }
}

/// The `params` member alone, decoded once the method is known.
public struct RPCParamsEnvelope<Params: Decodable & Sendable>: Decodable, Sendable {
    public var params: Params
}

/// A successful JSON-RPC response.
public struct RPCSuccess<Result: Codable & Sendable>: Codable, Sendable {
    public var jsonrpc = "2.0"
    public var id: RPCID
    public var result: Result

    public init(id: RPCID, result: Result) {
        self.id = id
        self.result = result
    }
}

/// A JSON-RPC error response.
public struct RPCFailure: Codable, Sendable {
    public var jsonrpc = "2.0"
    public var id: RPCID
    public var error: RPCError

    public init(id: RPCID, error: RPCError) {
        self.id = id
        self.error = error
    }
}

/// A JSON-RPC notification: a message without an id, used for events.
public struct RPCNotification<Params: Codable & Sendable>: Codable, Sendable {
    public var jsonrpc = "2.0"
    public var method: String
    public var params: Params

    public init(method: String, params: Params) {
        self.method = method
        self.params = params
    }
}

/// A response as a client reads it: a result or an error, for a given id.
public struct RPCResponse<Result: Decodable & Sendable>: Decodable, Sendable {
    public var id: RPCID?
    public var result: Result?
    public var error: RPCError?
}
