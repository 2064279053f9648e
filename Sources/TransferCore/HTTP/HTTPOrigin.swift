import Foundation

/// A URL's origin (RFC 6454): scheme, host and port, the port made explicit. Credentials a job
/// carries (its `Authorization`, `Cookie` and other credential-like headers) go only to the job
/// URL's origin, as curl does without `--location-trusted`.
struct HTTPOrigin: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int

    /// nil when `url` has no scheme or host, or a scheme without a known default port and no port.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), let raw = url.host(percentEncoded: false), !raw.isEmpty else { return nil }
        guard let port = url.port ?? Self.defaultPort(scheme) else { return nil }
        self.scheme = scheme
        host = HostPolicy.normalize(host: raw)
        self.port = port
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// Whether `a` and `b` have the same origin; a URL without one matches nothing.
    static func same(_ a: URL, _ b: URL) -> Bool {
        guard let first = HTTPOrigin(a), let second = HTTPOrigin(b) else { return false }
        return first == second
    }

    /// `scheme://host:port`, for messages.
    var text: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
