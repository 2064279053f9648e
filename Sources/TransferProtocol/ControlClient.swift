import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a call to the daemon did not produce a result.
public enum ControlClientError: Error, Sendable, CustomStringConvertible {
    /// Nothing answers at the socket path: the daemon is not running there.
    case cannotConnect(path: String, reason: String)
    /// The socket exists but its mode or group keeps this user out (`EACCES`).
    case permissionDenied(path: String)
    /// The daemon answered with a JSON-RPC error.
    case rpc(RPCError)
    /// The connection broke or the daemon sent something that is not a response.
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .cannotConnect(let path, let reason): return "cannot connect to \(path): \(reason)"
        case .permissionDenied(let path): return "permission denied on \(path)"
        case .rpc(let error): return error.message
        case .protocolViolation(let detail): return "unexpected answer from transferd: \(detail)"
        }
    }
}

/// A small blocking client for the control socket: one connection, one request at a time.
/// Used by transferctl and the tests; scripts in other languages speak the same lines.
public final class ControlClient {
    /// The socket path this client is connected to.
    public let socketPath: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    /// Notifications that arrived while a call waited for its answer, for `readNotification`.
    private var notifications: [[UInt8]] = []
    private var nextID: Int64 = 1
    private let encoder = WireCoding.encoder()
    private let decoder = WireCoding.decoder()

    /// Connects to the daemon's socket at `path`. With `timeout`, a call that gets no answer for
    /// that long fails instead of waiting for ever on a hung daemon.
    public init(socketPath path: String, timeout: Duration? = nil) throws(ControlClientError) {
        socketPath = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .cannotConnect(path: path, reason: String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else {
            close(fd)
            throw .cannotConnect(path: path, reason: "the path is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let number = errno
            close(fd)
            if number == EACCES { throw .permissionDenied(path: path) }
            throw .cannotConnect(path: path, reason: String(cString: strerror(number)))
        }
        if let timeout {
            var value = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Shuts the connection down in both directions: a call or read blocked on it, on another
    /// thread, returns with an error. Safe to call from any thread, any number of times.
    public func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Calls `method` and waits for its result.
    public func call<M: RPCMethod>(_ method: M.Type, _ params: M.Params) throws(ControlClientError) -> M.Result {
        let id = RPCID.number(nextID)
        nextID += 1
        let line: Data
        do {
            line = try encoder.encode(RPCRequest(id: id, method: M.name, params: params))
        } catch {
            throw .protocolViolation("cannot encode the request: \(error)")
        }
        try sendLine(Array(line))
        while true {
            let reply = try readLine()
            // Notifications (no id) may interleave with responses; skip them here.
            guard let response = try? decoder.decode(RPCResponse<M.Result>.self, from: Data(reply)) else {
                throw .protocolViolation(String(decoding: reply.prefix(200), as: UTF8.self))
            }
            // An error with a null id answers a request the daemon could not read or would not
            // take (a refused connection): it is this call's.
            if let error = response.error { throw .rpc(error) }
            guard let responseID = response.id else {
                notifications.append(reply)
                continue
            }
            guard responseID == id, let result = response.result else {
                throw .protocolViolation("a response for id \(responseID), expected \(id)")
            }
            return result
        }
    }

    /// Reads the next notification (an event stream's line without an id): its method and the
    /// whole line, for decoding its params with `RPCNotification<Params>`.
    public func readNotification() throws(ControlClientError) -> (method: String, line: [UInt8]) {
        while true {
            let line = notifications.isEmpty ? try readLine() : notifications.removeFirst()
            guard let header = try? decoder.decode(RPCRequestHeader.self, from: Data(line)) else {
                throw .protocolViolation(String(decoding: line.prefix(200), as: UTF8.self))
            }
            // A stray answer to an earlier call is not a notification.
            guard header.id == nil, let method = header.method else { continue }
            return (method, line)
        }
    }

    /// Decodes a notification's params.
    public func params<Params: Codable & Sendable>(_ type: Params.Type, of line: [UInt8]) throws(ControlClientError) -> Params {
        do {
            return try decoder.decode(RPCNotification<Params>.self, from: Data(line)).params
        } catch {
            throw .protocolViolation("a notification transferd sent cannot be read (\(error)): \(String(decoding: line.prefix(200), as: UTF8.self))")
        }
    }

    /// Sends raw bytes followed by a newline (for tests and tools that build their own JSON).
    public func sendLine(_ bytes: [UInt8]) throws(ControlClientError) {
        var out = bytes
        out.append(UInt8(ascii: "\n"))
        var sent = 0
        while sent < out.count {
            let n = out[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                let failure = errno
                // A daemon that refuses the connection (too many, say) answers and closes at once,
                // possibly before the request is written: its answer is then the one to show.
                if failure == EPIPE, receivedLineBeforeClose() { return }
                throw .protocolViolation("the daemon closed the connection (\(String(cString: strerror(failure))))")
            }
            sent += n
        }
    }

    /// Reads what the daemon sent before it closed the connection, without waiting; returns
    /// whether that holds a whole line for `readLine`.
    private func receivedLineBeforeClose() -> Bool {
        while true {
            let n = receive(flags: Int32(MSG_DONTWAIT))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
        }
        return buffer.contains(UInt8(ascii: "\n"))
    }

    /// Reads one line (without its newline).
    public func readLine() throws(ControlClientError) -> [UInt8] {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            let n = receive(flags: 0)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw .protocolViolation("transferd did not answer in time; it may be overloaded or hung (see its log: journalctl -u transferd)")
                }
                throw .protocolViolation("reading failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { throw .protocolViolation("the daemon closed the connection") }
        }
    }

    /// Receives what is there (at most 64 KiB) into `buffer`; returns recv's result.
    private func receive(flags: Int32) -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, flags) }
        if n > 0 { buffer.append(contentsOf: chunk[..<n]) }
        return n
    }
}
