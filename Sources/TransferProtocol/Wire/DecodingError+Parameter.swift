extension DecodingError {
    /// Names the parameter at fault in the wire's snake_case, e.g. `missing parameter 'url'` or
    /// `parameter 'retry.max_attempts' must be an integer`.
    public var parameterDescription: String {
        func path(_ codingPath: [any CodingKey], _ last: (any CodingKey)? = nil) -> String {
            let keys = (codingPath + (last.map { [$0] } ?? [])).filter { $0.stringValue != "params" }
            let names = keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue.snakeCased }
            return names.isEmpty ? "params" : names.joined(separator: ".")
        }
        switch self {
        case .keyNotFound(let key, let context):
            return "missing parameter '\(path(context.codingPath, key))'"
        case .typeMismatch(let type, let context):
            return "parameter '\(path(context.codingPath))' must be \(Self.typeName(type))"
        case .valueNotFound(let type, let context):
            return "parameter '\(path(context.codingPath))' must be \(Self.typeName(type)), not null"
        case .dataCorrupted(let context):
            return "parameter '\(path(context.codingPath))': \(context.debugDescription)"
        @unknown default:
            return "\(self)"
        }
    }

    private static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Bool.Type: return "true or false"
        case is Int.Type, is Int64.Type, is UInt32.Type: return "an integer"
        case is [String: String].Type: return "an object of strings"
        default:
            // Foundation reports an object it expected as Dictionary<String, Any>.
            if String(describing: type).hasPrefix("Dictionary") { return "an object" }
            return type is any Collection.Type ? "an array" : "an object"
        }
    }
}
