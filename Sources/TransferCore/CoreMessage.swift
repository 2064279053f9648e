import TransferProtocol

/// A message of the core that may name request parameters. The core names a parameter as the wire
/// does (`overwrite`); the daemon may name it with the `transferctl` flag that sets it too, which
/// the core does not know about.
public struct CoreMessage: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// A parameter of a request method, such as `overwrite` of `submit`.
    public struct Parameter: Hashable, Sendable {
        /// The method's name (`submit`).
        public var method: String
        /// The parameter's name in the method's params (`overwrite`).
        public var name: String

        public init(method: String, name: String) {
            self.method = method
            self.name = name
        }

        /// `overwrite` of `submit`.
        public static let submitOverwrite = Parameter(method: Submit.name, name: "overwrite")
        /// `all` of `status`.
        public static let statusAll = Parameter(method: Status.name, name: "all")
        /// `owner` of `status`.
        public static let statusOwner = Parameter(method: Status.name, name: "owner")
        /// `limit` of `status`.
        public static let statusLimit = Parameter(method: Status.name, name: "limit")
        /// `cursor` of `status`.
        public static let statusCursor = Parameter(method: Status.name, name: "cursor")
        /// `all` of `subscribe`.
        public static let subscribeAll = Parameter(method: Subscribe.name, name: "all")
    }

    enum Part: Hashable, Sendable {
        case text(String)
        case parameter(Parameter)
    }

    private(set) var parts: [Part]

    public init(_ text: String) {
        parts = [.text(text)]
    }

    public init(stringLiteral value: String) {
        parts = [.text(value)]
    }

    public init(stringInterpolation: StringInterpolation) {
        parts = stringInterpolation.parts
    }

    /// The text, with each parameter spelled by `name`.
    public func rendered(naming name: (Parameter) -> String) -> String {
        parts.map { part in
            switch part {
            case .text(let text): return text
            case .parameter(let parameter): return name(parameter)
            }
        }
        .joined()
    }

    /// The text with parameters named as the wire names them.
    public var description: String { rendered { $0.name } }

    /// Builds a message from a string literal with `\(parameter:)` interpolations.
    public struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            if case .text(let text) = parts.last {
                parts[parts.count - 1] = .text(text + literal)
            } else {
                parts.append(.text(literal))
            }
        }

        public mutating func appendInterpolation(parameter: Parameter) {
            parts.append(.parameter(parameter))
        }

        public mutating func appendInterpolation<T>(_ value: T) {
            appendLiteral(String(describing: value))
        }
    }
}
