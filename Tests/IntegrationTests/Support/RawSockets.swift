import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Plain sockets for tests that play a hostile client: many connections, requests without
/// reading the answers, connections that say nothing.
enum RawSocket {
    /// A non-blocking TCP connection to 127.0.0.1:`port` (the connect may still be in progress).
    static func connectTCP(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 || errno == EINPROGRESS else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Calls `body` with the address of the Unix socket at `path` (bind, connect).
    static func withUnixAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A non-blocking connection to the Unix socket at `path`.
    static func connectUnix(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        let result = withUnixAddress(path) { connect(fd, $0, $1) }
        guard result == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Waits up to `seconds` for `fd` to be readable; then what one read gives: bytes, `[]` at the
    /// end of the stream (or a reset), nil when nothing came in time.
    static func read(_ fd: Int32, seconds: Double) -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(buffer.prefix(n)) : []
    }

    /// Sends what fits of `bytes` without waiting; the count sent (0 when the socket is full).
    static func sendSome(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        return max(0, n)
    }

    /// Descriptors the process `pid` has open.
    static func openDescriptors(of pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// Resident memory of the process `pid` now, in bytes (VmRSS).
    static func residentBytes(of pid: Int32) -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }.map { $0 * 1024 }
        }
        return nil
    }

    /// Sets the open-file limit (soft and hard) of the running process `pid` (`prlimit --nofile`;
    /// Glibc's `prlimit` is not visible to Swift).
    static func limitDescriptors(of pid: Int32, to count: Int) -> Bool {
        (try? runProcess("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(count):\(count)"]).status) == 0
    }

    /// Sets only the soft open-file limit of `pid`, so that it can be raised again later.
    static func limitDescriptorsSoftly(of pid: Int32, to count: Int) -> Bool {
        (try? runProcess("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(count):"]).status) == 0
    }

    /// The soft open-file limit of the running process `pid`, from `/proc/PID/limits`.
    static func descriptorLimit(of pid: Int32) -> Int? {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8) else { return nil }
        for line in limits.split(separator: "\n") where line.hasPrefix("Max open files") {
            return line.split(separator: " ").dropFirst(3).first.flatMap { Int($0) }
        }
        return nil
    }
}
