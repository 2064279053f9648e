import Foundation
import CLinuxShims

/// The proxies every request goes through (`http_proxy`, `https_proxy`, `no_proxy` in the
/// configuration). An empty one leaves libcurl to read the daemon's environment.
public struct Proxies: Sendable, Equatable {
    public var http: String
    public var https: String
    /// Hosts reached directly: comma-separated names, domains and addresses, as libcurl's NOPROXY.
    public var none: String

    public init(http: String = "", https: String = "", none: String = "") {
        self.http = http
        self.https = https
        self.none = none
    }

    /// Makes these the proxies of every request from now on (also of a redirect of one under way).
    public func use() {
        clinuxshims_set_proxies(http, https, none)
    }

    /// What a proxy setting looks like, for messages.
    public static let expected = "\"\" for none, or [SCHEME://][USER:PASSWORD@]HOST[:PORT] with SCHEME http, https, socks4, socks4a, socks5 or socks5h"

    /// Whether `text` is a proxy libcurl takes: empty (none), or `[scheme://][user:password@]host[:port]`
    /// with the scheme http, https, socks4, socks4a, socks5 or socks5h.
    public static func isValid(_ text: String) -> Bool {
        if text.isEmpty { return true }
        guard !text.contains(where: { $0.isWhitespace || $0.isNewline }), text.count <= 2048 else { return false }
        if let range = text.range(of: "://") {
            let scheme = text[..<range.lowerBound].lowercased()
            guard ["http", "https", "socks4", "socks4a", "socks5", "socks5h"].contains(scheme) else { return false }
            return !text[range.upperBound...].isEmpty
        }
        return true
    }
}
