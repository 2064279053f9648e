import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately bad HTTP server: answers every request with the bytes `answer` gives for its
/// request line, exactly as given (so it can send what no well-behaved server library would: two
/// Content-Length fields, interim answers, a redirect to ftp:, a huge header), then closes.
/// Listens on 127.0.0.1 or ::1 on a free port; counts the connections it accepted.
final class RawHTTPServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let counters = Counters()

    private final class Counters: Sendable {
        let accepted = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)
    }

    /// - Parameters:
    ///   - ipv6: listen on ::1 instead of 127.0.0.1.
    ///   - answer: the bytes to send for a request line such as `GET /x HTTP/1.1`.
    init(ipv6: Bool = false, answer: @escaping @Sendable (String) -> [UInt8]) throws {
        let fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DeadlineExceeded(description: "socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var bound: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw DeadlineExceeded(description: "cannot listen on \(ipv6 ? "::1" : "127.0.0.1"): \(message)")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = withUnsafePointer(to: &storage) { pointer in
            ipv6
                ? pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                : pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
        listener = fd
        let counters = counters
        Thread.detachNewThread {
            while !counters.stopped.load(ordering: .relaxed) {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                counters.accepted.add(1, ordering: .relaxed)
                Thread.detachNewThread { Self.serve(connection, answer: answer) }
            }
        }
    }

    /// Connections accepted so far.
    var connections: Int { counters.accepted.load(ordering: .relaxed) }

    func stop() {
        counters.stopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func serve(_ connection: Int32, answer: @Sendable (String) -> [UInt8]) {
        defer { close(connection) }
        var request: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !request.containsHeaderEnd, request.count < 65536 {
            let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            request += buffer[..<count]
        }
        let line = String(decoding: request.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        let bytes = answer(line)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return }
            sent += count
        }
        shutdown(connection, Int32(SHUT_WR))
        // Let the client read everything before the socket goes away.
        while buffer.withUnsafeMutableBytes({ read(connection, $0.baseAddress, $0.count) }) > 0 {}
    }
}

extension [UInt8] {
    fileprivate var containsHeaderEnd: Bool {
        guard count >= 4 else { return false }
        for index in 0...(count - 4) where self[index] == 13 && self[index + 1] == 10 && self[index + 2] == 13 && self[index + 3] == 10 {
            return true
        }
        return false
    }
}

/// An HTTP/1.1 answer as raw bytes: a status line, the header lines, a blank line, the body.
func rawAnswer(_ status: String, _ headers: [String], body: [UInt8] = []) -> [UInt8] {
    Array(("HTTP/1.1 \(status)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n").utf8) + body
}
