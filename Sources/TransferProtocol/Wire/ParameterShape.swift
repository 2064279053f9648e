/// What a method's parameter may hold on the wire: checked before the typed decoding, so that an
/// unknown or misspelled parameter, a value of the wrong kind, a number no Swift type can hold or
/// text that is not UTF-8 gets a message naming the parameter and the problem.
public indirect enum ParameterShape: Sendable, Equatable {
    case string
    case bool
    /// A whole number of at least `minimum` (and at most 2^63 − 1).
    case integer(minimum: Int64)
    /// A whole number from 0 to 2^64 − 1.
    case unsigned64
    /// Any finite number.
    case number
    case list(ParameterShape)
    /// An object with free-form names and values of one shape (such as `headers`).
    case map(ParameterShape)
    /// An object with the named members only.
    case object([String: ParameterShape])

    /// A whole number from 0.
    public static let count = ParameterShape.integer(minimum: 0)

    /// How a message names what this shape expects.
    var expectation: String {
        switch self {
        case .string: return "a string"
        case .bool: return "true or false"
        case .integer(let minimum) where minimum == Int64.min: return "an integer"
        case .integer(let minimum) where minimum == 0: return "a whole number from 0 to \(Int64.max)"
        case .integer(let minimum): return "a whole number from \(minimum) to \(Int64.max)"
        case .unsigned64: return "a whole number from 0 to \(UInt64.max)"
        case .number: return "a number"
        case .list(let element): return "an array of \(element.plural)"
        case .map(let value): return "an object whose values are \(value.plural)"
        case .object: return "an object"
        }
    }

    private var plural: String {
        switch self {
        case .string: return "strings"
        case .bool: return "booleans"
        case .integer, .unsigned64, .number: return "numbers"
        case .list: return "arrays"
        case .map, .object: return "objects"
        }
    }
}

extension RPCMethod {
    /// By default a method's parameters are checked by their type alone.
    public static var parameters: [String: ParameterShape]? { nil }
}

extension Submit {
    public static let parameters: [String: ParameterShape]? = [
        "url": .string, "destination": .string, "headers": .map(.string), "overwrite": .bool, "id": .string,
        "sha256": .string, "size": .count, "session": .string, "create_directories": .bool, "replace": .bool, "not_before": .string, "deadline": .string,
        "kind": .string, "source": .string, "spool": .string, "method": .string, "content_type": .string,
        "resumable": .string, "priority": .string, "limit_rate": .string, "segments": .integer(minimum: Int64.min), "cacert": .string, "label": .string, "conditional": .bool,
        "form": .list(.object(["name": .string, "value": .string, "file": .bool, "filename": .string, "content_type": .string])),
        "retry": .object([
            "max_attempts": .integer(minimum: Int64.min), "max_time_seconds": .number, "idle_timeout_seconds": .number,
            "low_speed_bytes_per_second": .integer(minimum: Int64.min), "low_speed_seconds": .number,
        ]),
    ]
}

extension Status {
    public static let parameters: [String: ParameterShape]? = [
        "id": .string, "states": .list(.string), "all": .bool, "session": .string, "owner": .integer(minimum: 0),
        "created_after": .string, "created_before": .string, "limit": .integer(minimum: 1), "cursor": .string,
        "newest_first": .bool, "paused": .bool,
    ]
}

extension Log {
    public static let parameters: [String: ParameterShape]? = ["id": .string]
}

extension Cancel {
    public static let parameters: [String: ParameterShape]? = ["id": .string]
}

extension Remove {
    public static let parameters: [String: ParameterShape]? = ["id": .string]
}

extension Clean {
    public static let parameters: [String: ParameterShape]? = ["states": .list(.string), "older_than_seconds": .number, "all": .bool]
}

extension Retry {
    public static let parameters: [String: ParameterShape]? = ["id": .string]
}

extension Pause {
    public static let parameters: [String: ParameterShape]? = ["ids": .list(.string), "session": .string, "all": .bool]
}

extension Resume {
    public static let parameters: [String: ParameterShape]? = ["ids": .list(.string), "session": .string, "all": .bool]
}

extension Subscribe {
    public static let parameters: [String: ParameterShape]? = ["session": .string, "ids": .list(.string), "all": .bool, "after": .integer(minimum: 0)]
}

extension Unsubscribe {
    public static let parameters: [String: ParameterShape]? = ["subscription": .integer(minimum: Int64.min)]
}

extension Ack {
    public static let parameters: [String: ParameterShape]? = ["session": .string, "seq": .unsigned64]
}

extension Version {
    public static let parameters: [String: ParameterShape]? = [:]
}

extension MetricsMethod {
    public static let parameters: [String: ParameterShape]? = [:]
}

extension Reload {
    public static let parameters: [String: ParameterShape]? = [:]
}

extension PriorityMethod {
    public static let parameters: [String: ParameterShape]? = ["id": .string, "priority": .string]
}

extension Move {
    public static let parameters: [String: ParameterShape]? = ["id": .string, "first": .bool, "before": .string]
}
