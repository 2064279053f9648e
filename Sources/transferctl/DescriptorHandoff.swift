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
            throw .refused(RPCError(.invalidParams, "cannot open \(path) to upload it: \(reason)"))
        }
        return fd
    }

    /// Sends `fd` (named `name` in the daemon's messages) to the upload socket of the daemon
    /// whose control socket is `controlSocket`; returns the daemon's answer.
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
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            throw .connectionBroken(
                "cannot reach transferd's upload socket \(path) (\(reason)): the daemon is older than uploads, "
                    + "or could not create it (see its log)")
        }
        let nameBytes = Array(name.utf8.prefix(4000))
        let sent = nameBytes.withUnsafeBytes { cdescriptorpassing_send(socketFD, $0.baseAddress, $0.count, fd) }
        guard sent > 0 else { throw .connectionBroken("cannot pass \(name) to transferd: \(String(cString: strerror(errno)))") }
        shutdown(socketFD, Int32(SHUT_WR))
        var line: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !line.contains(UInt8(ascii: "\n")) {
            let n = buffer.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw .connectionBroken("transferd closed the upload socket before answering for \(name)") }
            line += buffer.prefix(n)
            if line.count > 1 << 20 { break }
        }
        guard let reply = try? WireCoding.decoder().decode(UploadHandoff.Reply.self, from: Data(line.prefix { $0 != UInt8(ascii: "\n") })) else {
            throw .connectionBroken("transferd's upload socket answered something that is not a hand-off answer")
        }
        return reply
    }
}
