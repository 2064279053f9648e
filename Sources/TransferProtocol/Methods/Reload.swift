/// `reload`: the daemon reads its configuration again and applies what can change while it runs,
/// answering only once that is done. An invalid file changes nothing and is answered with
/// `configuration_invalid`, naming the key. Root and the daemon's own user only.
public enum Reload: RPCMethod {
    public static let name = "reload"

    public struct Params: Codable, Hashable, Sendable {
        public init() {}
    }

    public struct Result: Codable, Hashable, Sendable {
        /// The keys whose new values are in effect now.
        public var applied: [String]
        /// The keys whose new values take effect at the next start.
        public var pending: [String]
        /// The configuration file read, or nil when the daemon runs on defaults and the environment.
        public var config: String?

        public init(applied: [String], pending: [String], config: String?) {
            self.applied = applied
            self.pending = pending
            self.config = config
        }
    }
}
