import CSystemd
#if canImport(Glibc)
import Glibc
#endif

/// The listening socket systemd passes when a socket unit starts the daemon (`LISTEN_FDS`,
/// `LISTEN_PID`).
enum SocketActivation {
    /// The passed socket's descriptor, or nil when none was passed. `LISTEN_PID`, `LISTEN_FDS`
    /// and `LISTEN_FDNAMES` are removed from the environment either way, so nothing the daemon
    /// starts inherits them. Throws when what was passed cannot be the control socket.
    static func listeningSocket() throws -> Int32? {
        let count = sd_listen_fds(1)
        if count < 0 {
            throw ConfigurationError(description: "cannot take the sockets systemd passed: \(String(cString: strerror(-count)))")
        }
        if count == 0 { return nil }
        guard count == 1 else {
            throw ConfigurationError(description: "systemd passed \(count) sockets; transferd listens on one: give the socket unit a single ListenStream= path")
        }
        let descriptor = SD_LISTEN_FDS_START
        guard sd_is_socket_unix(descriptor, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
            throw ConfigurationError(description: "the socket systemd passed is not a listening Unix stream socket: set ListenStream= to a path in transferd.socket")
        }
        return descriptor
    }
}
