import Foundation

/// One entry of `allowed_hosts` or `denied_hosts`: a host name, every name under a domain
/// (`*.example.com`), an IP address or a CIDR range.
public enum HostRule: Sendable, Hashable, CustomStringConvertible {
    /// Exactly this name (lowercase, no trailing dot).
    case name(String)
    /// Every name under this domain, at any depth, but not the domain itself.
    case subdomains(of: String)
    /// Every address in this range (IPv4-mapped IPv6 addresses count as IPv4).
    case network(IPNetwork)

    /// Parses an entry; nil when it is none of the four forms.
    public init?(_ entry: String) {
        let text = entry.trimmingCharacters(in: .whitespaces).lowercased()
        if let network = IPNetwork(text) {
            self = .network(network)
        } else if text.hasPrefix("*."), let domain = Self.hostName(String(text.dropFirst(2))) {
            self = .subdomains(of: domain)
        } else if let name = Self.hostName(text) {
            self = .name(name)
        } else {
            return nil
        }
    }

    /// Whether the (normalised) host name matches a name rule.
    func matches(host: String) -> Bool {
        switch self {
        case .name(let name): return host == name
        case .subdomains(let domain): return host.hasSuffix("." + domain)
        case .network: return false
        }
    }

    /// Whether the address lies in a range rule.
    func matches(address: IPAddress) -> Bool {
        if case .network(let network) = self { return network.contains(address) }
        return false
    }

    var isNetwork: Bool {
        if case .network = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .name(let name): return name
        case .subdomains(let domain): return "*." + domain
        case .network(let network):
            let full = network.address.isIPv4 ? 32 : 128
            return network.prefixLength == full ? "\(network.address)" : "\(network)"
        }
    }

    /// A DNS name: labels of letters, digits, `-` and `_`, each 1–63 bytes, 253 in all; a
    /// trailing dot is dropped. All-numeric names (`127.1`) are refused: they read as addresses.
    static func hostName(_ text: String) -> String? {
        let name = text.hasSuffix(".") ? String(text.dropLast()) : text
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.utf8.count <= 253,
            labels.allSatisfy({ label in
                (1...63).contains(label.utf8.count)
                    && label.utf8.allSatisfy { byte in
                        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    }
            }),
            !labels.allSatisfy({ $0.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) } })
        else { return nil }
        return name
    }
}
