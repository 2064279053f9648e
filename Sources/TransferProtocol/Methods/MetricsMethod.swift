/// `metrics`: the daemon's metrics in the Prometheus text exposition format (version 0.0.4), the
/// text node_exporter's textfile collector reads and `GET /metrics` serves.
public enum MetricsMethod: RPCMethod {
    public static let name = "metrics"

    public struct Params: Codable, Hashable, Sendable {
        public init() {}
    }

    public struct Result: Codable, Hashable, Sendable {
        /// The exposition text, one metric family after another, ending with a newline.
        public var text: String
        /// `text/plain; version=0.0.4; charset=utf-8`: the text's media type, as HTTP serves it.
        public var contentType: String

        public init(text: String, contentType: String) {
            self.text = text
            self.contentType = contentType
        }
    }
}
