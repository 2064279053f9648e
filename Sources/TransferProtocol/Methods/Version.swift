/// `version`: the daemon's version and the protocol version it speaks.
public enum Version: RPCMethod {
    public static let name = "version"

    public struct Params: Codable, Hashable, Sendable {
        public init() {}
    }

    public struct Result: Codable, Hashable, Sendable {
        public var daemon: String
        public var `protocol`: Int
        public init(daemon: String, protocol: Int) {
            self.daemon = daemon
            self.protocol = `protocol`
        }
    }
}
