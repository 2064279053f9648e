#if canImport(Glibc)
import Glibc
#endif

/// Resolves host names the way libcurl does (the system's `getaddrinfo`), for the host checks.
enum HostResolver {
    /// Every address `host` resolves to, or why it resolves to none. Blocks while the resolver
    /// works: never call it on the engine's delegate queue or a Swift concurrency thread.
    static func addresses(of host: String) -> Result<[IPAddress], ResolutionFailure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(ResolutionFailure(reason: reason))
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var entry = list
        while let current = entry {
            if let address = Self.address(of: current.pointee), !addresses.contains(address) {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else { return .failure(ResolutionFailure(reason: "no IPv4 or IPv6 address")) }
        return .success(addresses)
    }

    private static func address(of info: addrinfo) -> IPAddress? {
        guard let socketAddress = info.ai_addr else { return nil }
        switch info.ai_family {
        case AF_INET:
            return socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                var address = pointer.pointee.sin_addr
                return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
            }
        case AF_INET6:
            return socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                var address = pointer.pointee.sin6_addr
                return IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })
            }
        default:
            return nil
        }
    }
}

/// Why a host name did not resolve.
struct ResolutionFailure: Error {
    var reason: String
}
