#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address, as the bytes a connection would use.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses the strict text form (`inet_pton`): dotted-quad IPv4, or IPv6 with or without
    /// brackets and with or without a zone (`fe80::1%eth0`, the zone is dropped). Forms such as
    /// `127.1` or `2130706433` are not addresses here: they are names, which `getaddrinfo` resolves.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let zone = text.firstIndex(of: "%") { text = text[..<zone] }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return nil }
        self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    /// The IPv4 address an IPv6 address carries, when it is IPv4-mapped (`::ffff:a.b.c.d`) or
    /// IPv4-compatible (`::a.b.c.d`, except `::` and `::1`); otherwise the address itself. Rules
    /// compare this form, so `::ffff:127.0.0.1` is as much loopback as `127.0.0.1`.
    public var unmapped: IPAddress {
        guard bytes.count == 16, bytes[0..<10].allSatisfy({ $0 == 0 }) else { return self }
        let tail = Array(bytes[12..<16])
        switch (bytes[10], bytes[11]) {
        case (0xff, 0xff):
            return IPAddress(bytes: tail) ?? self
        case (0, 0) where tail[0..<3].contains(where: { $0 != 0 }) || tail[3] > 1:
            return IPAddress(bytes: tail) ?? self
        default:
            return self
        }
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count))
        }
        guard written != nil else { return bytes.map(String.init).joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
