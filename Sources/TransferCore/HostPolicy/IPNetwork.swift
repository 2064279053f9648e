/// A range of addresses in CIDR form (`10.0.0.0/8`, `fe80::/10`); a single address is a range of one.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the range (host bits cleared), IPv4 for mapped IPv6 ranges.
    public let address: IPAddress
    public let prefixLength: Int

    /// Parses `address` or `address/prefix`. An IPv4-mapped IPv6 range (`::ffff:127.0.0.0/104`)
    /// becomes the IPv4 range it covers, so that it matches as addresses are compared.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let parsed = IPAddress(String(first)), !first.contains("%") else { return nil }
        let bits = parsed.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                let value = Int(parts[1]), value <= bits
            else { return nil }
            length = value
        }
        var address = parsed
        if parsed.bytes.count == 16, parsed.unmapped.isIPv4, length >= 96, parsed.bytes[10] == 0xff {
            address = parsed.unmapped
            length -= 96
        }
        self.init(address: address, prefixLength: length)
    }

    init(address: IPAddress, prefixLength: Int) {
        self.prefixLength = prefixLength
        self.address = IPAddress(bytes: Self.masked(address.bytes, prefixLength)) ?? address
    }

    /// Whether `candidate` (compared in its unmapped form) lies in this range.
    public func contains(_ candidate: IPAddress) -> Bool {
        let other = candidate.unmapped
        guard other.bytes.count == address.bytes.count else { return false }
        return Self.masked(other.bytes, prefixLength) == address.bytes
    }

    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(max(length - index * 8, 0), 8)
            return kept == 8 ? byte : byte & ~(UInt8(0xff) >> kept)
        }
    }
}
