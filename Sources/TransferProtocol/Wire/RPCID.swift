/// A JSON-RPC request id: a number, a string, or null (the answer to a request whose id could not be read).
public enum RPCID: Codable, Hashable, Sendable, CustomStringConvertible {
    case number(Int64)
    case string(String)
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let number = try? container.decode(Int64.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .null: try container.encodeNil()
        }
    }

    public var description: String {
        switch self {
        case .number(let number): return String(number)
        case .string(let string): return string
        case .null: return "null"
        }
    }
}
