import CDescriptorPassing
import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Hands a file transferctl opened (with the user's rights) to the daemon over its upload
/// socket, as a descriptor (`SCM_RIGHTS`), and reads back the name of the daemon's synced copy.
enum DescriptorHandoff {
    /// Opens `path` for reading; a file the user cannot read is refused here, naming it.
    static func open(_ path: String) throws(TransferCtlError) -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .localFile("cannot open \(path) to upload it: \(reason); nothing was sent to transferd")
        }
        return fd
    }

    /// How long connecting and passing the file may take: the daemon accepts hand-offs at once,
    /// so a longer wait means it is busy or stuck.
    static let connectSeconds = 10
    /// How long the daemon's answer may take at least; the copy of a big file adds to it.
    static let answerSeconds = 60
    /// Bytes per second the daemon's copy is expected to reach at least (its disk may be slow).
    static let slowestCopyBytesPerSecond: Int64 = 16 << 20

    /// Sends `fd` (named `name` in the daemon's messages) to the upload socket of the daemon
    /// whose control socket is `controlSocket`; returns the daemon's answer. Gives up, saying
    /// so, when the daemon does not take the file or answer in time.
    static func send(_ fd: Int32, name: String, controlSocket: String) throws(TransferCtlError) -> UploadHandoff.Reply {
        let path = UploadHandoff.socketPath(forControlSocket: controlSocket)
        let socketFD = cdescriptorpassing_socket()
        guard socketFD >= 0 else { throw .connectionBroken("cannot make a socket: \(String(cString: strerror(errno)))") }
        defer { close(socketFD) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .connectionBroken("the upload socket's path \(path) is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        // connect(2) on a Unix socket whose backlog is full, and sendmsg(2), wait at most this long.
        setTimeout(socketFD, SO_SNDTIMEO, seconds: connectSeconds)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK { throw .connectionBroken(stuck(path, seconds: connectSeconds, doing: "accept")) }
            throw .connectionBroken(
                "cannot reach transferd's upload socket \(path) (\(String(cString: strerror(code)))): the daemon is older than uploads, "
                    + "or could not create it (see its log)")
        }
        let nameBytes = Array(name.utf8.prefix(4000))
        let sent = nameBytes.withUnsafeBytes { cdescriptorpassing_send(socketFD, $0.baseAddress, $0.count, fd) }
        let sendError = errno
        if sent <= 0 {
            if sendError == EAGAIN || sendError == EWOULDBLOCK { throw .connectionBroken(stuck(path, seconds: connectSeconds, doing: "take")) }
            // A daemon that refuses the hand-off (a limit) answers and closes before reading:
            // its answer says why.
            if let reply = try readReply(socketFD, path: path, seconds: 1) { return reply }
            throw .connectionBroken("cannot pass \(name) to transferd: \(String(cString: strerror(sendError)))")
        }
        shutdown(socketFD, Int32(SHUT_WR))
        var size = stat()
        let bytes = fstat(fd, &size) == 0 ? Int64(size.st_size) : 0
        let seconds = answerSeconds + Int(bytes / slowestCopyBytesPerSecond)
        guard let reply = try readReply(socketFD, path: path, seconds: seconds) else {
            throw .connectionBroken(
                "transferd's upload hand-off (\(path)) did not answer within \(seconds) s for \(name): the daemon is busy or stuck; "
                    + "check its log (systemctl status transferd, or journalctl -u transferd) and try again")
        }
        return reply
    }

    /// The daemon's answer line, or nil when none came within `seconds` or the connection ended
    /// without one. An answer that cannot be read is an error.
    private static func readReply(_ socketFD: Int32, path: String, seconds: Int) throws(TransferCtlError) -> UploadHandoff.Reply? {
        setTimeout(socketFD, SO_RCVTIMEO, seconds: seconds)
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !line.contains(UInt8(ascii: "\n")) {
            let n = buffer.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            line += buffer.prefix(n)
            if line.count > 1 << 20 { break }
        }
        guard !line.isEmpty else { return nil }
        guard let reply = try? WireCoding.decoder().decode(UploadHandoff.Reply.self, from: Data(line.prefix { $0 != UInt8(ascii: "\n") })) else {
            throw .connectionBroken("transferd's upload socket \(path) answered something that is not a hand-off answer")
        }
        return reply
    }

    private static func setTimeout(_ socketFD: Int32, _ option: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func stuck(_ path: String, seconds: Int, doing verb: String) -> String {
        "transferd's upload hand-off (\(path)) did not \(verb) the file within \(seconds) s: the daemon is busy or stuck; "
            + "check its log (systemctl status transferd, or journalctl -u transferd) and try again"
    }
}
