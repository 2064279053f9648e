/// A control-socket method: its wire name and the types of its parameters and result.
public protocol RPCMethod: Sendable {
    associatedtype Params: Codable & Sendable
    associatedtype Result: Codable & Sendable
    /// The JSON-RPC method name, matching the CLI verb.
    static var name: String { get }
    /// The wire shape of `Params`, checked before decoding it (unknown names, wrong kinds,
    /// unreadable numbers and text are refused by name); nil: only the type checks them.
    static var parameters: [String: ParameterShape]? { get }
}

/// The version of the wire protocol this build speaks. It changes only when an existing
/// request or response changes incompatibly; new methods and fields do not change it.
public let transferProtocolVersion = 1

/// The version of transferd and transferctl.
public let transferdVersion = "0.1.0"
