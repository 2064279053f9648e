/// Which hosts transferd may fetch from: a guard against server-side request forgery, where a
/// user makes the daemon (the system service, with its own network position) request
/// `http://127.0.0.1:…`, an internal service, or the cloud metadata service at 169.254.169.254.
///
/// A host is refused when a `denied` entry matches its name or an address it resolves to; when
/// local addresses are denied and one of its addresses is loopback, link-local or unspecified;
/// or when `allowed` is not empty and neither its name nor all of its addresses match an entry.
public struct HostPolicy: Sendable, Equatable {
    /// When not empty, the only hosts fetched from.
    public var allowed: [HostRule]
    /// Never fetched from; wins over `allowed`.
    public var denied: [HostRule]
    /// Whether addresses of this machine and its link (``localNetworks``) are refused.
    public var deniesLocalAddresses: Bool
    /// How `local_addresses` was set, as refusals name it (e.g. `"auto" (deny for the system service)`).
    public var localAddressesSetting: String
    /// Where the rules come from, as refusals name it (the configuration file).
    public var source: String

    public init(
        allowed: [HostRule] = [], denied: [HostRule] = [], deniesLocalAddresses: Bool = false,
        localAddressesSetting: String = "\"allow\"", source: String = "the configuration"
    ) {
        self.allowed = allowed
        self.denied = denied
        self.deniesLocalAddresses = deniesLocalAddresses
        self.localAddressesSetting = localAddressesSetting
        self.source = source
    }

    /// The ranges `local_addresses` governs, with what each is.
    public static let localNetworks: [(network: IPNetwork, kind: String)] = [
        ("127.0.0.0/8", "loopback"), ("::1/128", "loopback"),
        ("0.0.0.0/8", "unspecified (this host)"), ("::/128", "unspecified (this host)"),
        ("169.254.0.0/16", "link-local (cloud metadata services answer there)"), ("fe80::/10", "link-local"),
        ("fd00:ec2::254/128", "cloud metadata service"),
    ].compactMap { text, kind in IPNetwork(text).map { ($0, kind) } }

    /// The form rules compare: lowercase, without IPv6 brackets or a name's trailing dot.
    public static func normalize(host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix("."), !host.hasSuffix("..") { host.removeLast() }
        return host
    }

    /// Whether a decision about `host` needs the addresses it resolves to.
    public func needsAddresses(forHost host: String) -> Bool {
        if deniesLocalAddresses || denied.contains(where: \.isNetwork) { return true }
        return !allowed.isEmpty && !allowed.contains { $0.matches(host: host) } && allowed.contains(where: \.isNetwork)
    }

    /// Why `host` (normalised) may not be fetched, given the addresses it resolves to (or the
    /// address it is), or nil when it may. Each message names the rule and the fix.
    public func refusal(host: String, addresses: [IPAddress]) -> String? {
        if let rule = denied.first(where: { $0.matches(host: host) }) {
            return "\(host) is denied by the entry \"\(rule)\" of denied_hosts in \(source): "
                + "fetch from another host, or remove that entry and reload transferd"
        }
        for address in addresses {
            if let rule = denied.first(where: { $0.matches(address: address) }) {
                return "\(Self.subject(host, address)) is denied by the entry \"\(rule)\" of denied_hosts in \(source): "
                    + "fetch from another host, or remove that entry and reload transferd"
            }
        }
        if deniesLocalAddresses {
            for address in addresses {
                guard let local = Self.localNetworks.first(where: { $0.network.contains(address) }) else { continue }
                return "\(Self.subject(host, address)) is a \(local.kind) address, refused because local_addresses is "
                    + "\(localAddressesSetting) in \(source), which keeps users from reaching this machine's own services "
                    + "and the cloud metadata service through transferd: fetch from another host, or set local_addresses "
                    + "to \"allow\" and reload transferd if such downloads are intended"
            }
        }
        guard !allowed.isEmpty, !allowed.contains(where: { $0.matches(host: host) }) else { return nil }
        let covered = !addresses.isEmpty && addresses.allSatisfy { address in allowed.contains { $0.matches(address: address) } }
        guard !covered else { return nil }
        let resolved = addresses.isEmpty || (addresses.count == 1 && addresses[0].description == host)
            ? "" : " (which resolves to \(addresses.map(\.description).joined(separator: ", ")))"
        return "\(host)\(resolved) is not in allowed_hosts in \(source), the only hosts transferd fetches from: "
            + "add it (a name, *.domain, an address or a CIDR range) there and reload transferd"
    }

    /// "127.0.0.1", or "localhost (which resolves to 127.0.0.1)".
    private static func subject(_ host: String, _ address: IPAddress) -> String {
        host == address.description ? host : "\(host) (which resolves to \(address))"
    }
}
