import CDescriptorPassing
import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Hands a file to upload to the daemon as an open descriptor (`SCM_RIGHTS` over the upload
/// socket beside the control socket), so the daemon never opens it with its own rights; the
/// daemon answers with the name of its synced copy, which the submit names.
enum FileHandoff {
    static func spool(_ file: URL, controlSocket: String) throws(TransferError) -> UploadHandoff.Reply {
        let path = file.path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw TransferError(code: .refused, message: "cannot open \(path) to upload it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let socketPath = UploadHandoff.socketPath(forControlSocket: controlSocket)
        let socketFD = try connect(socketPath)
        defer { close(socketFD) }
        let name = Array(path.utf8.prefix(4000))
        guard name.withUnsafeBytes({ cdescriptorpassing_send(socketFD, $0.baseAddress, $0.count, fd) }) > 0 else { throw unavailable(socketPath, errno) }
        shutdown(socketFD, Int32(SHUT_WR))
        // The daemon copies the file before it answers: a big file takes a while.
        return try readReply(socketFD, socketPath: socketPath, about: path).reply
    }

    /// The file of the download without destination `jobID`, from the daemon's inbox, as an open
    /// read-only descriptor (the caller closes it).
    static func fetch(_ jobID: String, controlSocket: String) throws(TransferError) -> Int32 {
        let socketPath = UploadHandoff.socketPath(forControlSocket: controlSocket)
        let socketFD = try connect(socketPath)
        defer { close(socketFD) }
        let request = Array("{\"fetch\":\"\(jobID)\"}\n".utf8)
        guard request.withUnsafeBytes({ send(socketFD, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count else {
            throw unavailable(socketPath, errno)
        }
        let (_, descriptor) = try readReply(socketFD, socketPath: socketPath, about: "job \(jobID)'s file")
        guard let descriptor else {
            throw TransferError(code: .daemonUnavailable, message: "transferd answered a fetch of job \(jobID)'s file without the file")
        }
        return descriptor
    }

    private static func connect(_ socketPath: String) throws(TransferError) -> Int32 {
        let socketFD = cdescriptorpassing_socket()
        guard socketFD >= 0 else { throw unavailable(socketPath, errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(socketFD)
            throw unavailable(socketPath, ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socketFD, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(socketFD)
            throw unavailable(socketPath, code)
        }
        return socketFD
    }

    /// Reads the daemon's one-line answer, and the descriptor that came with it, if any.
    private static func readReply(_ socketFD: Int32, socketPath: String, about what: String) throws(TransferError) -> (reply: UploadHandoff.Reply, descriptor: Int32?) {
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var descriptor: Int32 = -1
        while !line.contains(UInt8(ascii: "\n")) {
            var passed: Int32 = -1
            let n = chunk.withUnsafeMutableBytes { cdescriptorpassing_receive(socketFD, $0.baseAddress, $0.count, &passed) }
            if passed >= 0 { descriptor = passed }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            line += chunk[..<n]
        }
        guard let reply = try? WireCoding.decoder().decode(UploadHandoff.Reply.self, from: Data(line.prefix { $0 != UInt8(ascii: "\n") })) else {
            if descriptor >= 0 { close(descriptor) }
            throw TransferError(code: .daemonUnavailable, message: "transferd's upload socket \(socketPath) closed without answering for \(what)")
        }
        if let error = reply.error {
            if descriptor >= 0 { close(descriptor) }
            throw TransferError(code: .refused, message: error.message)
        }
        return (reply, descriptor >= 0 ? descriptor : nil)
    }

    private static func unavailable(_ socketPath: String, _ code: Int32) -> TransferError {
        TransferError(
            code: .daemonUnavailable,
            message: "cannot hand the file to transferd at \(socketPath): \(String(cString: strerror(code))); is the daemon running?")
    }
}
