import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A datagram socket standing in for systemd's notification socket: pass `address` as
/// `NOTIFY_SOCKET` and it collects every message the daemon sends, with the time it arrived.
final class NotifySocket: Sendable {
    /// How the socket is named: a file, or a name in the abstract namespace (`@name`).
    enum Kind: Sendable, CaseIterable, CustomStringConvertible {
        case path
        case abstract

        var description: String { self == .path ? "path" : "abstract" }
    }

    struct Message: Sendable {
        let text: String
        let arrived: ContinuousClock.Instant
        /// When it arrived on CLOCK_MONOTONIC, in microseconds.
        let arrivedMonotonic: UInt64

        /// The `KEY=value` lines, as a dictionary.
        var fields: [String: String] {
            var fields: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return fields
        }
    }

    /// The value for `NOTIFY_SOCKET`.
    let address: String
    private let descriptor: Int32
    private let received = Mutex<[Message]>([])
    private let closed = Atomic<Bool>(false)
    private let readerDone = Atomic<Bool>(false)

    init(kind: Kind, directory: String) throws {
        let name = kind == .path ? directory + "/notify.sock" : "@transferd-test-notify-\(UUID().uuidString.prefix(12))"
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw NotifySocketError("socket: \(String(cString: strerror(errno)))") }
        // The abstract namespace is a leading NUL instead of the '@' in the name.
        var bytes = Array(name.utf8)
        if kind == .abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw NotifySocketError("socket name too long: \(name)") }
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        // A path is NUL-terminated; an abstract name is exactly its bytes long.
        let length = MemoryLayout<sa_family_t>.size + bytes.count + (kind == .path ? 1 : 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, socklen_t(length)) }
        }
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw NotifySocketError("bind \(name): \(String(cString: strerror(errno)))")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        self.address = name
        self.descriptor = descriptor
        Thread { [self] in
            receive()
            readerDone.store(true, ordering: .releasing)
        }.start()
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !closed.load(ordering: .relaxed) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { continue }
            let message = Message(
                text: String(decoding: buffer[0..<count], as: UTF8.self), arrived: .now, arrivedMonotonic: monotonicMicroseconds())
            received.withLock { $0.append(message) }
        }
    }

    /// Every message so far, in arrival order.
    var messages: [Message] { received.withLock { $0 } }

    /// Messages that set `field` to `value` (`WATCHDOG=1`, say).
    func messages(with field: String, _ value: String) -> [Message] {
        messages.filter { $0.fields[field] == value }
    }

    /// Waits for the first message at or after `index` that sets `field` to `value`; returns it and
    /// its index. `check` runs at every look and may throw to give up early.
    @discardableResult
    func waitFor(
        _ field: String, _ value: String, after index: Int = 0, seconds: Double = 60, check: () throws -> Void = {}
    ) async throws -> (message: Message, index: Int) {
        var found: (message: Message, index: Int)?
        try await waitUntil("\(field)=\(value) on NOTIFY_SOCKET", seconds: seconds) {
            let all = messages
            found = all.indices.dropFirst(index).first { all[$0].fields[field] == value }.map { (all[$0], $0) }
            if found == nil { try check() }
            return found != nil
        }
        guard let found else { throw NotifySocketError("no \(field)=\(value)") }
        return found
    }

    func close() {
        closed.store(true, ordering: .relaxed)
        // The reader wakes within its receive timeout and stops; close the socket after it.
        while !readerDone.load(ordering: .acquiring) { usleep(10_000) }
        Glibc.close(descriptor)
    }
}

struct NotifySocketError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Microseconds on CLOCK_MONOTONIC, the clock of `MONOTONIC_USEC=`.
func monotonicMicroseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
}
