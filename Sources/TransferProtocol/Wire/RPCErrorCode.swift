/// A stable numeric JSON-RPC error code. New codes may be added; existing ones never change meaning.
public struct RPCErrorCode: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    // JSON-RPC 2.0's own codes.
    /// The line is not valid JSON.
    public static let parseError = RPCErrorCode(rawValue: -32700)
    /// Valid JSON, but not a JSON-RPC 2.0 request object.
    public static let invalidRequest = RPCErrorCode(rawValue: -32600)
    /// The method does not exist.
    public static let methodNotFound = RPCErrorCode(rawValue: -32601)
    /// Parameters are missing or have the wrong type.
    public static let invalidParams = RPCErrorCode(rawValue: -32602)
    /// A fault inside the daemon; the request may be retried.
    public static let internalError = RPCErrorCode(rawValue: -32603)

    // transferd's codes.
    /// The request line exceeds the daemon's limit.
    public static let requestTooLarge = RPCErrorCode(rawValue: 1000)
    /// The URL is malformed or its scheme is not http or https.
    public static let unsupportedURL = RPCErrorCode(rawValue: 1001)
    /// The destination is not an absolute path to a file in an existing directory.
    public static let invalidDestination = RPCErrorCode(rawValue: 1002)
    /// The destination exists and the request did not ask to overwrite it.
    public static let destinationExists = RPCErrorCode(rawValue: 1003)
    /// No job with that id is visible to the caller.
    public static let noSuchJob = RPCErrorCode(rawValue: 1004)
    /// The job has already finished; it cannot be cancelled.
    public static let jobFinished = RPCErrorCode(rawValue: 1005)
    /// A job with that client-chosen id exists with a different request.
    public static let idConflict = RPCErrorCode(rawValue: 1006)
    /// A header name or value is not acceptable.
    public static let invalidHeader = RPCErrorCode(rawValue: 1007)
    /// The daemon is stopping and accepts no new work.
    public static let shuttingDown = RPCErrorCode(rawValue: 1008)
    /// A configured limit was reached.
    public static let limitExceeded = RPCErrorCode(rawValue: 1009)
    /// Another unfinished job already writes to that destination.
    public static let destinationBusy = RPCErrorCode(rawValue: 1010)
    /// The destination's filesystem has too little free space for the expected size.
    public static let insufficientSpace = RPCErrorCode(rawValue: 1011)
    /// The request nests arrays and objects deeper than the daemon's limit.
    public static let requestTooDeep = RPCErrorCode(rawValue: 1012)
    /// The URL's host, or an address it resolves to, is refused by the daemon's host rules
    /// (`allowed_hosts`, `denied_hosts`, `local_addresses`).
    public static let hostNotAllowed = RPCErrorCode(rawValue: 1013)
    /// The request needs a privilege the caller does not have (such as root for every user's jobs).
    public static let notPermitted = RPCErrorCode(rawValue: 1014)
    /// The configuration file (or environment) is invalid; the daemon goes on with the one it had.
    public static let configurationInvalid = RPCErrorCode(rawValue: 1015)
    /// The job has not ended: it cannot be removed or retried (cancel it first).
    public static let jobNotFinished = RPCErrorCode(rawValue: 1016)
    /// A job with that client-chosen id has ended; submit with `replace` to start it again under the same id.
    public static let jobExists = RPCErrorCode(rawValue: 1017)

    /// A short, stable name for the code, sent as `error.data.name`.
    public var name: String {
        switch self {
        case .parseError: return "parse_error"
        case .invalidRequest: return "invalid_request"
        case .methodNotFound: return "method_not_found"
        case .invalidParams: return "invalid_params"
        case .internalError: return "internal_error"
        case .requestTooLarge: return "request_too_large"
        case .unsupportedURL: return "unsupported_url"
        case .invalidDestination: return "invalid_destination"
        case .destinationExists: return "destination_exists"
        case .noSuchJob: return "no_such_job"
        case .jobFinished: return "job_finished"
        case .idConflict: return "id_conflict"
        case .invalidHeader: return "invalid_header"
        case .shuttingDown: return "shutting_down"
        case .limitExceeded: return "limit_exceeded"
        case .destinationBusy: return "destination_busy"
        case .insufficientSpace: return "insufficient_space"
        case .requestTooDeep: return "request_too_deep"
        case .hostNotAllowed: return "host_not_allowed"
        case .notPermitted: return "not_permitted"
        case .configurationInvalid: return "configuration_invalid"
        case .jobNotFinished: return "job_not_finished"
        case .jobExists: return "job_exists"
        default: return "error_\(rawValue)"
        }
    }

    public var description: String { "\(rawValue) (\(name))" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
