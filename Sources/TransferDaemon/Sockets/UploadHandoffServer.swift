import CDescriptorPassing
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TransferCore
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The upload socket beside the control socket (`<control socket>.upload`): takes a file a
/// client opened with its own rights, passed as a descriptor (`SCM_RIGHTS`), copies it into the
/// spool and answers one JSON line with the copy's name, which the client then submits.
///
/// Apart from the control socket because SwiftNIO reads stream sockets with `read(2)`, which
/// drops passed descriptors: this socket is served with `recvmsg(2)` by threads of its own (one
/// accepts, one serves each admitted client; see `UploadHandoffServer+Accept.swift`). It
/// gets the control socket's group and mode, so exactly the users who may submit may hand over.
final class UploadHandoffServer: Service, Sendable {
    let path: String
    /// The control socket whose group and mode this socket follows.
    let controlSocket: String
    let fd: Int32
    let spool: Spool
    let logger: Logger
    /// Hand-offs open at once, whoever they belong to (each holds a thread and a descriptor).
    /// `max_upload_handoffs_per_user` bounds one user's share, `upload_handoff_timeout_seconds`
    /// how long a client may keep one without passing its file.
    static let maxOpenHandoffs = 64
    /// Spool copies made at once; more wait for a turn, so that big files handed over together
    /// cannot take the threads the rest of the daemon needs.
    static let concurrentCopies = 8
    let copySlots = DispatchSemaphore(value: UploadHandoffServer.concurrentCopies)
    let handoffs = SharedConnectionSlots()
    let failures: AcceptFailureLog
    let configuration: LiveConfiguration
    /// Set when the daemon stops: the accept loop ends at its next connection.
    let stopping = Atomic<Bool>(false)

    /// Whether the daemon made the socket file (and so follows the control socket's group and
    /// mode, and removes it at the end) rather than systemd.
    private let ownsPath: Bool

    private init(
        path: String, controlSocket: String, fd: Int32, spool: Spool, configuration: LiveConfiguration, logger: Logger, ownsPath: Bool = true
    ) {
        self.ownsPath = ownsPath
        self.configuration = configuration
        failures = AcceptFailureLog(listener: "upload hand-off", logger: logger)
        self.path = path
        self.controlSocket = controlSocket
        self.fd = fd
        self.spool = spool
        self.logger = logger
    }

    /// Binds the upload socket for the control socket at `controlSocket`, with its group and
    /// mode. Nil (with a warning logged) when that fails: uploads then work only by path, for
    /// the daemon's own user.
    static func bind(controlSocket: String, spool: Spool, configuration: LiveConfiguration, logger: Logger) -> UploadHandoffServer? {
        let path = UploadHandoff.socketPath(forControlSocket: controlSocket)
        func unavailable(_ why: String) -> UploadHandoffServer? {
            logger.warning(
                "the upload socket is not available: only the daemon's own user can upload (by path)",
                metadata: ["socket": "\(path)", "error": "\(why)"])
            return nil
        }
        var control = stat()
        guard stat(controlSocket, &control) == 0 else { return unavailable("cannot read the control socket's mode: \(String(cString: strerror(errno)))") }
        var existing = stat()
        if lstat(path, &existing) == 0, (existing.st_mode & S_IFMT) == S_IFSOCK { unlink(path) }
        let fd = cdescriptorpassing_socket()
        guard fd >= 0 else { return unavailable(String(cString: strerror(errno))) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return unavailable("the path is too long for a socket")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0, listen(fd, 64) == 0 else {
            let why = String(cString: strerror(errno))
            close(fd)
            return unavailable(why)
        }
        // The control socket's group and mode: whoever may submit may hand a file over.
        if chown(path, uid_t.max, control.st_gid) != 0 || chmod(path, control.st_mode & 0o777) != 0 {
            let why = String(cString: strerror(errno))
            close(fd)
            unlink(path)
            return unavailable(why)
        }
        return UploadHandoffServer(path: path, controlSocket: controlSocket, fd: fd, spool: spool, configuration: configuration, logger: logger)
    }

    /// The upload socket systemd passed (the socket unit's `ListenStream=….upload`): systemd owns
    /// its path, group and mode.
    static func adopt(
        descriptor: Int32, controlSocket: String, spool: Spool, configuration: LiveConfiguration, logger: Logger
    ) -> UploadHandoffServer {
        let path = SocketActivation.boundPath(of: descriptor) ?? UploadHandoff.socketPath(forControlSocket: controlSocket)
        return UploadHandoffServer(
            path: path, controlSocket: controlSocket, fd: descriptor, spool: spool, configuration: configuration, logger: logger, ownsPath: false)
    }

    func run() async throws {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "transferd.upload-handoff"
        thread.start()
        // A reload (socket_mode, socket_group) or an administrator may change the control
        // socket's group or mode: this socket follows within seconds.
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if self.ownsPath { self.followControlSocket() }
                try await Task.sleep(for: .seconds(2))
            }
        }
        // Wakes the thread blocked in accept(2): it ends its loop. A socket systemd passed must
        // stay usable for the next start (shutdown(2) on it fails the socket unit), so that one is
        // woken with a connection of our own instead.
        stopping.store(true, ordering: .sequentiallyConsistent)
        if ownsPath {
            shutdown(fd, Int32(SHUT_RDWR))
            unlink(path)
        } else {
            Self.connect(to: path)
        }
    }

    /// Opens and closes a connection to the socket at `path` (to wake the accept loop).
    private static func connect(to path: String) {
        let client = cdescriptorpassing_socket()
        guard client >= 0 else { return }
        defer { close(client) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Gives this socket the control socket's group and mode when they differ.
    private func followControlSocket() {
        var control = stat()
        var mine = stat()
        guard stat(controlSocket, &control) == 0, lstat(path, &mine) == 0 else { return }
        if mine.st_gid != control.st_gid { chown(path, uid_t.max, control.st_gid) }
        if mine.st_mode & 0o777 != control.st_mode & 0o777 { chmod(path, control.st_mode & 0o777) }
    }

    /// One hand-off of an admitted client (`credentials` from the kernel): its descriptor and the
    /// file's name, the copy, and the answer. A client that passes nothing within
    /// `upload_handoff_timeout_seconds` is told so and closed.
    func serve(_ client: Int32, credentials: PeerCredentials, timeoutSeconds: Int) {
        defer { close(client) }
        var timeout = timeval()
        timeout.tv_sec = timeoutSeconds
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        var descriptor: Int32 = -1
        let received = buffer.withUnsafeMutableBytes { cdescriptorpassing_receive(client, $0.baseAddress, $0.count, &descriptor) }
        let receiveError = errno
        let reply: UploadHandoff.Reply
        if received < 0, receiveError == EAGAIN || receiveError == EWOULDBLOCK {
            reply = UploadHandoff.Reply(error: RPCError(.limitExceeded, Self.timedOut(seconds: timeoutSeconds)))
            logger.debug("upload hand-off closed: nothing came in time", metadata: ["uid": "\(credentials.uid)", "seconds": "\(timeoutSeconds)"])
        } else if descriptor < 0, received > 0, buffer.first == UInt8(ascii: "{") {
            serveFetch(client, line: Array(buffer.prefix(received)), uid: credentials.uid)
            return
        } else if descriptor < 0, received > 0, Self.outOfDescriptors(client) {
            // The kernel drops a passed descriptor it cannot install: the client did send one.
            reply = UploadHandoff.Reply(error: RPCError(.internalError, Self.noDescriptorFree))
        } else if descriptor < 0 {
            reply = UploadHandoff.Reply(
                error: RPCError(.invalidParams, "no file descriptor came with the hand-off: send the open file with SCM_RIGHTS, as transferctl upload does"))
        } else {
            defer { close(descriptor) }
            let name = received > 0 ? String(decoding: buffer.prefix(received), as: UTF8.self) : "the file"
            copySlots.wait()
            defer { copySlots.signal() }
            do {
                let entry = try spool.ingest(descriptor: descriptor, named: name, owner: credentials.uid)
                reply = UploadHandoff.Reply(spool: entry.name, size: entry.size, sha256: entry.sha256)
                logger.info("file handed over for an upload", metadata: ["uid": "\(credentials.uid)", "bytes": "\(entry.size)"])
            } catch {
                reply = UploadHandoff.Reply(error: RPCError(error))
                logger.info("file for an upload refused", metadata: ["uid": "\(credentials.uid)", "error": "\(error.message)"])
            }
        }
        Self.answer(client, reply, flags: 0)
    }
}
