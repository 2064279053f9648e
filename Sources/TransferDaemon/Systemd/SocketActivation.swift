import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The listening socket systemd passes when a socket unit starts the daemon (`LISTEN_FDS`,
/// `LISTEN_PID`).
enum SocketActivation {
    /// The sockets systemd passed: the control socket, and the upload socket when the socket unit
    /// listens on `<control socket>.upload` too.
    struct Passed {
        var control: Int32
        var upload: Int32?
    }

    /// The passed sockets' descriptors, or nil when none were passed. `LISTEN_PID`, `LISTEN_FDS`
    /// and `LISTEN_FDNAMES` are removed from the environment either way, so nothing the daemon
    /// starts inherits them. Throws when what was passed cannot be the control socket (and the
    /// upload socket).
    static func listeningSockets() throws -> Passed? {
        let count = sd_listen_fds(1)
        if count < 0 {
            throw ConfigurationError(description: "cannot take the sockets systemd passed: \(String(cString: strerror(-count)))")
        }
        if count == 0 { return nil }
        guard count <= 2 else {
            throw ConfigurationError(
                description: "systemd passed \(count) sockets; transferd listens on its control socket and, beside it, the upload socket: "
                    + "give the socket unit ListenStream=PATH and ListenStream=PATH.upload only")
        }
        var control: Int32?
        var upload: Int32?
        for descriptor in SD_LISTEN_FDS_START..<(SD_LISTEN_FDS_START + count) {
            guard sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
                throw ConfigurationError(description: "a socket systemd passed is not a listening Unix stream socket: set ListenStream= to a path in transferd.socket")
            }
            if boundPath(of: descriptor)?.hasSuffix(".upload") == true { upload = descriptor } else { control = descriptor }
        }
        guard let control else {
            throw ConfigurationError(description: "systemd passed no control socket, only an upload socket: give the socket unit ListenStream=PATH too")
        }
        return Passed(control: control, upload: upload)
    }

    /// The path a Unix socket is bound to, if it has one.
    static func boundPath(of descriptor: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { return nil }
        return withUnsafeBytes(of: address.sun_path) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }
}
