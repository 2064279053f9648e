public import Foundation

/// A request line read as far as its method: what to call, and the line to read its params from.
public struct DecodedRequest: Sendable, Equatable {
    /// The request's id; nil for a notification, which gets no answer.
    public var id: RPCID?
    public var method: String
    /// Whether the request has a `params` member.
    public var hasParams: Bool
    /// The whole line, from which `params(for:)` decodes the parameters once the method is known.
    public var line: Data
    /// A submit's params, read with the header (`RequestLine`); nil when they did not fit or decode.
    var submit: Submit.Params?

    /// The parameters for `method`'s type, or an `invalidParams` error naming the parameter at fault.
    public func params<M: RPCMethod>(for method: M.Type) throws(RPCError) -> M.Params {
        if M.self == Submit.self, let submit, let params = submit as? M.Params { return params }
        return try RequestDecoder.decodeParams(method, line, hasParams)
    }
}

/// Why a request line was refused before any method ran, and the id to answer with.
public struct RequestDecodingError: Error, Sendable, Equatable {
    /// The request's id when it could be read, else null.
    public var id: RPCID
    public var error: RPCError

    public init(id: RPCID, _ error: RPCError) {
        self.id = id
        self.error = error
    }
}

/// Decodes request lines of the control protocol, without side effects, so that the daemon and
/// the fuzz tests run the same code on untrusted bytes.
///
/// The nesting depth is checked by a byte scan (`JSONNesting`) before the JSON parser runs, so a
/// line of a million `[` costs one pass and never reaches the parser's recursion.
public struct RequestDecoder: Sendable {
    /// The method names, for the message to a request that names none.
    public var methods: [String]
    /// How deeply a request may nest arrays and objects; the request object is the first level.
    public var maxDepth: Int

    public init(methods: [String], maxDepth: Int = Limits.maxJSONDepth) {
        self.methods = methods
        self.maxDepth = maxDepth
    }

    /// The answer to a line longer than `Limits.maxRequestLineBytes`, which the framing skipped.
    public static let lineTooLong = lineTooLong(limit: Limits.maxRequestLineBytes)

    /// The answer to a line longer than `limit` bytes (`max_request_bytes`), which the framing skipped.
    public static func lineTooLong(limit: Int) -> RequestDecodingError {
        RequestDecodingError(
            id: .null,
            RPCError(
                .requestTooLarge,
                "the request line is longer than \(limit) bytes (max_request_bytes) and was ignored: send smaller requests, one JSON object per line"))
    }

    /// Reads the JSON-RPC header of one request line (its newline removed).
    public func decode(_ line: Data) throws(RequestDecodingError) -> DecodedRequest {
        if JSONNesting.exceeds(maxDepth, in: line) {
            throw RequestDecodingError(
                id: .null,
                RPCError(
                    .requestTooDeep,
                    "the request nests arrays and objects more than \(maxDepth) levels deep (max_json_depth) and was ignored: send at most \(maxDepth) levels (the request object is the first)"))
        }
        let read: RequestLine
        do {
            read = try RequestLine.read(line)
        } catch DecodingError.dataCorrupted {
            throw RequestDecodingError(id: .null, RPCError(.parseError, "the request is not valid JSON: send one JSON-RPC 2.0 object per line"))
        } catch {
            throw RequestDecodingError(id: .null, RPCError(.invalidRequest, "the request must be a JSON object with jsonrpc, id, method and params"))
        }
        let header = read.header
        guard !header.hasUnusableID else {
            throw RequestDecodingError(
                id: .null,
                RPCError(
                    .invalidRequest,
                    "the request id must be a string, a whole number from \(Int64.min) to \(Int64.max), or null, so that the answer can name it; the request was not carried out"))
        }
        let id = header.id ?? .null
        guard header.jsonrpc == "2.0" else {
            throw RequestDecodingError(id: id, RPCError(.invalidRequest, "the request must carry \"jsonrpc\": \"2.0\""))
        }
        guard let method = header.method else {
            throw RequestDecodingError(id: id, RPCError(.invalidRequest, "the request has no method: give one of \(methods.joined(separator: ", "))"))
        }
        return DecodedRequest(id: header.id, method: method, hasParams: header.hasParams, line: line, submit: read.submit)
    }

    /// The parameters of `method` from a request line; a request without `params` decodes as `{}`.
    public static func decodeParams<M: RPCMethod>(_ method: M.Type, _ line: Data, _ hasParams: Bool) throws(RPCError) -> M.Params {
        if hasParams, let known = M.parameters, !ParameterFit<M>.check(line),
            let problem = shapeProblem(line, known: known, method: M.name)
        {
            throw RPCError(.invalidParams, "invalid params for \(M.name): \(problem)")
        }
        do {
            if !hasParams { return try WireCoding.decoder().decode(M.Params.self, from: Data("{}".utf8)) }
            return try WireCoding.decoder().decode(RPCParamsEnvelope<M.Params>.self, from: line).params
        } catch let error as DecodingError {
            throw RPCError(.invalidParams, "invalid params for \(M.name): \(error.parameterDescription)")
        } catch {
            throw RPCError(.invalidParams, "invalid params for \(M.name): \(error)")
        }
    }

    /// What is wrong with the `params` member of `line` for a method whose parameters are `known`:
    /// params that are not an object, an unknown member (with the closest known name), a value
    /// of the wrong kind, or one that cannot be read (with its path). Nil when it fits.
    static func shapeProblem(_ line: Data, known: [String: ParameterShape], method: String) -> String? {
        guard let envelope = try? JSONDecoder().decode(ProbeEnvelope.self, from: line) else { return nil }
        switch envelope.params {
        case .object(let members):
            return ProbeValue.problem(members: members, known: known, path: nil, method: method)
        case .null:
            return nil
        case .array:
            return "params must be an object of named parameters, such as {\"id\": \"…\"}; parameters by position (an array) are not supported"
        default:
            return "params must be an object of named parameters, such as {\"id\": \"…\"}"
        }
    }
}
