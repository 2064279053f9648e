/// A JSON-RPC error object: a stable code, a message that says what to do, and the code's name.
public struct RPCError: Error, Codable, Hashable, Sendable, CustomStringConvertible {
    /// Extra, machine-readable detail.
    public struct Details: Codable, Hashable, Sendable {
        /// The code's stable name, such as `destination_exists`.
        public var name: String
        public init(name: String) { self.name = name }
    }

    public var code: RPCErrorCode
    public var message: String
    public var data: Details?

    public init(_ code: RPCErrorCode, _ message: String) {
        self.code = code
        self.message = message
        self.data = Details(name: code.name)
    }

    public var description: String { message }
}
