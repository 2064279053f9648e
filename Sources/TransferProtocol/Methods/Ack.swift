/// `ack`: the session has what it needs of its terminal events up to `seq`; they are not
/// replayed again. Answered once the acknowledgement is durable.
public enum Ack: RPCMethod {
    public static let name = "ack"

    public struct Params: Codable, Hashable, Sendable {
        public var session: String
        /// Events with a sequence number up to and including this one are acknowledged.
        public var seq: UInt64

        public init(session: String, seq: UInt64) {
            self.session = session
            self.seq = seq
        }
    }

    public struct Result: Codable, Hashable, Sendable {
        /// How many events this call acknowledged (earlier acknowledgements not counted).
        public var acknowledged: Int
        public init(acknowledged: Int) { self.acknowledged = acknowledged }
    }
}
