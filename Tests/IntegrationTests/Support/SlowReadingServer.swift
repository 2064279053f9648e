import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A server that takes request bodies slowly and never answers: each connection reads `chunk`
/// bytes every `interval` until the client goes or the server stops. Listens on 127.0.0.1 on a
/// free port; counts the bytes it read.
final class SlowReadingServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let counters = Counters()

    private final class Counters: Sendable {
        let bytes = Atomic<Int64>(0)
        let connections = Atomic<Int>(0)
        let stopped = Atomic<Bool>(false)
    }

    init(chunk: Int = 16 << 10, interval: Duration = .milliseconds(100)) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw DeadlineExceeded(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw DeadlineExceeded(description: "cannot listen on 127.0.0.1: \(message)")
        }
        var bound4 = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound4) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: bound4.sin_port)
        listener = fd
        let counters = counters
        let pause = UInt32(interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
        Thread.detachNewThread {
            while !counters.stopped.load(ordering: .relaxed) {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                counters.connections.add(1, ordering: .relaxed)
                Thread.detachNewThread {
                    defer { close(connection) }
                    var buffer = [UInt8](repeating: 0, count: chunk)
                    while !counters.stopped.load(ordering: .relaxed) {
                        let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                        guard count > 0 else { return }
                        counters.bytes.add(Int64(count), ordering: .relaxed)
                        usleep(pause)
                    }
                }
            }
        }
    }

    /// Body (and header) bytes read so far.
    var bytesRead: Int64 { counters.bytes.load(ordering: .relaxed) }
    var connections: Int { counters.connections.load(ordering: .relaxed) }

    func stop() {
        counters.stopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
