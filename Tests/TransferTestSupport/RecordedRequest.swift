/// A request as ``TestHTTPServer`` received it, for tests to assert on.
public struct RecordedRequest: Sendable, CustomStringConvertible {
    /// The method, e.g. `GET`.
    public let method: String
    /// The request target as sent, query included.
    public let uri: String
    /// The path the request was routed by: `uri` without its query.
    public let path: String
    /// The headers in the order received, names as sent.
    public let headers: [(String, String)]
    /// When the server had read the request's head (on its own threads, so a test held up by a
    /// loaded machine still learns when the request came).
    public let receivedAt = ContinuousClock.now

    /// Creates a record.
    public init(method: String, uri: String, path: String, headers: [(String, String)]) {
        self.method = method
        self.uri = uri
        self.path = path
        self.headers = headers
    }

    /// The first value of the header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    /// Every value of the header `name` (case-insensitive).
    public func headerValues(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.0.lowercased() == wanted }.map(\.1)
    }

    public var description: String {
        "\(method) \(uri) " + headers.map { "\($0.0): \($0.1)" }.joined(separator: "; ")
    }
}
