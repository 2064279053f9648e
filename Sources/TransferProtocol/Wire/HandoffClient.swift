import CDescriptorPassing
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Why a hand-off over the upload socket did not produce an answer.
public enum HandoffError: Error, Sendable {
    /// The daemon refused (a limit, a file it cannot take, no such job): its error.
    case refused(RPCError)
    /// The upload socket could not be reached, or did not answer in time: what happened and what to do.
    case unavailable(String)
}

/// A client of the upload socket beside the control socket: hands a file to upload over as an
/// open descriptor (`send`), and gets the file of a download without destination back as one
/// (`fetch`). `transferctl` and TransferKit both use it; see docs/protocol.md.
public enum HandoffClient {
    /// How long connecting and passing the file may take: the daemon accepts hand-offs at once,
    /// so a longer wait means it is busy or stuck.
    public static let connectSeconds = 10
    /// How long the daemon's answer may take at least; the copy of a big file adds to it.
    public static let answerSeconds = 60
    /// Bytes per second the daemon's copy is expected to reach at least (its disk may be slow).
    public static let slowestCopyBytesPerSecond: Int64 = 16 << 20

    /// Sends `fd` (named `name` in the daemon's messages) to the upload socket of the daemon
    /// whose control socket is `controlSocket`; returns the daemon's answer. Gives up, saying
    /// so, when the daemon does not take the file or answer in time.
    public static func send(_ fd: Int32, name: String, controlSocket: String) throws(HandoffError) -> UploadHandoff.Reply {
        let path = UploadHandoff.socketPath(forControlSocket: controlSocket)
        let socketFD = try connect(path)
        defer { close(socketFD) }
        let nameBytes = Array(name.utf8.prefix(4000))
        let sent = nameBytes.withUnsafeBytes { cdescriptorpassing_send(socketFD, $0.baseAddress, $0.count, fd) }
        let sendError = errno
        if sent <= 0 {
            if sendError == EAGAIN || sendError == EWOULDBLOCK { throw .unavailable(stuck(path, seconds: connectSeconds, doing: "take")) }
            // A daemon that refuses the hand-off (a limit) answers and closes before reading:
            // its answer says why.
            if let reply = try readReply(socketFD, path: path, seconds: 1)?.reply { return reply }
            throw .unavailable("cannot pass \(name) to transferd: \(String(cString: strerror(sendError)))")
        }
        shutdown(socketFD, Int32(SHUT_WR))
        var size = stat()
        let bytes = fstat(fd, &size) == 0 ? Int64(size.st_size) : 0
        let seconds = answerSeconds + Int(bytes / slowestCopyBytesPerSecond)
        guard let reply = try readReply(socketFD, path: path, seconds: seconds)?.reply else {
            throw .unavailable(
                "transferd's upload hand-off (\(path)) did not answer within \(seconds) s for \(name): the daemon is busy or stuck; "
                    + "check its log (systemctl status transferd, or journalctl -u transferd) and try again")
        }
        return reply
    }

    /// The daemon's answer line and the descriptor that came with it, or nil when no answer came
    /// within `seconds` or the connection ended without one. An answer that cannot be read is an error.
    private static func readReply(_ socketFD: Int32, path: String, seconds: Int) throws(HandoffError) -> (reply: UploadHandoff.Reply, descriptor: Int32?)? {
        setTimeout(socketFD, SO_RCVTIMEO, seconds: seconds)
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptor: Int32 = -1
        while !line.contains(UInt8(ascii: "\n")) {
            var passed: Int32 = -1
            let n = buffer.withUnsafeMutableBytes { cdescriptorpassing_receive(socketFD, $0.baseAddress, $0.count, &passed) }
            if passed >= 0 {
                if descriptor >= 0 { close(descriptor) }
                descriptor = passed
            }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            line += buffer.prefix(n)
            if line.count > 1 << 20 { break }
        }
        guard !line.isEmpty,
            let reply = try? WireCoding.decoder().decode(UploadHandoff.Reply.self, from: Data(line.prefix { $0 != UInt8(ascii: "\n") }))
        else {
            if descriptor >= 0 { close(descriptor) }
            if line.isEmpty { return nil }
            throw .unavailable("transferd's upload socket \(path) answered something that is not a hand-off answer")
        }
        return (reply, descriptor >= 0 ? descriptor : nil)
    }

    /// Connects to the upload socket at `path`; `connect(2)` on a socket whose backlog is full,
    /// and the sends after it, wait at most `connectSeconds`.
    private static func connect(_ path: String) throws(HandoffError) -> Int32 {
        let socketFD = cdescriptorpassing_socket()
        guard socketFD >= 0 else { throw .unavailable("cannot make a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(socketFD)
            throw .unavailable("the upload socket's path \(path) is too long for a Unix socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        setTimeout(socketFD, SO_SNDTIMEO, seconds: connectSeconds)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(socketFD)
            if code == EAGAIN || code == EWOULDBLOCK { throw .unavailable(stuck(path, seconds: connectSeconds, doing: "accept")) }
            throw .unavailable(
                "cannot reach transferd's upload socket \(path) (\(String(cString: strerror(code)))): the daemon is older than uploads, "
                    + "or could not create it (see its log)")
        }
        return socketFD
    }

    private static func setTimeout(_ socketFD: Int32, _ option: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func stuck(_ path: String, seconds: Int, doing verb: String) -> String {
        "transferd's upload hand-off (\(path)) did not \(verb) the file within \(seconds) s: the daemon is busy or stuck; "
            + "check its log (systemctl status transferd, or journalctl -u transferd) and try again"
    }

    /// The file of the download without destination `jobID` (the caller's), from the daemon's
    /// inbox, as an open read-only descriptor the caller closes.
    public static func fetch(_ jobID: String, controlSocket: String) throws(HandoffError) -> Int32 {
        let path = UploadHandoff.socketPath(forControlSocket: controlSocket)
        let socketFD = try connect(path)
        defer { close(socketFD) }
        guard let request = try? WireCoding.encoder().encode(["fetch": jobID]) else { throw .unavailable("cannot encode a fetch of job \(jobID)") }
        let line = Array(request) + [UInt8(ascii: "\n")]
        guard line.withUnsafeBytes({ Glibc.send(socketFD, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == line.count else {
            throw .unavailable("cannot ask transferd's upload socket \(path) for job \(jobID)'s file: \(String(cString: strerror(errno)))")
        }
        guard let (reply, descriptor) = try readReply(socketFD, path: path, seconds: answerSeconds) else {
            throw .unavailable("transferd's upload socket \(path) did not answer a fetch of job \(jobID)'s file within \(answerSeconds) s")
        }
        if let error = reply.error {
            if let descriptor { close(descriptor) }
            throw .refused(error)
        }
        guard let descriptor else { throw .unavailable("transferd answered a fetch of job \(jobID)'s file without the file") }
        return descriptor
    }
}
