import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import TransferFraming
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// `struct ucred` of `SO_PEERCRED` (pid, uid, gid: three 32-bit fields, in this order), which
/// Swift's Glibc module does not export. A Swift struct of three same-sized fields has C's layout.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// One accepted connection: its line-framed channel and its peer.
struct ControlConnection: Sendable {
    let channel: NIOAsyncChannel<LineFrame, ByteBuffer>
    let peer: Peer
}

/// The control socket: accepts connections and answers one request line at a time per connection.
/// Bound (or adopted from systemd) before the service group runs, so the socket accepts by the time
/// systemd hears READY=1.
final class ControlServer: Service {
    private let server: NIOAsyncChannel<ControlConnection, Never>
    private let router: RequestRouter
    private let logger: Logger
    private let configuration: LiveConfiguration
    private let connections = Atomic<Int>(0)
    let path: String
    /// Whether this process created the socket file (and so sets its mode and removes it); an
    /// adopted socket belongs to its socket unit.
    let ownsPath: Bool

    private init(
        server: NIOAsyncChannel<ControlConnection, Never>, path: String, ownsPath: Bool, router: RequestRouter,
        configuration: LiveConfiguration, logger: Logger
    ) {
        self.server = server
        self.path = path
        self.ownsPath = ownsPath
        self.router = router
        self.configuration = configuration
        self.logger = logger
    }

    /// Binds `path` with the configured mode (the file is created under a umask, so it is never wider).
    static func bind(path: String, router: RequestRouter, configuration: LiveConfiguration, logger: Logger) async throws -> ControlServer {
        let mode = configuration.current.socketModeValue
        let previous = umask(~mode & 0o777)
        defer { umask(previous) }
        let server = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: accept)
        chmod(path, mode)
        return ControlServer(server: server, path: path, ownsPath: true, router: router, configuration: configuration, logger: logger)
    }

    /// Serves on a listening socket systemd passed (socket activation). Its path and mode are the
    /// socket unit's business.
    static func adopt(descriptor: Int32, router: RequestRouter, configuration: LiveConfiguration, logger: Logger) async throws -> ControlServer {
        let server = try await bootstrap.bind(descriptor, childChannelInitializer: accept)
        let path = server.channel.localAddress?.pathname ?? "(passed by systemd)"
        return ControlServer(server: server, path: path, ownsPath: false, router: router, configuration: configuration, logger: logger)
    }

    private static var bootstrap: ServerBootstrap {
        ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 128)
            // A client may send its request and shut down its write side (`socat`, `nc -N`):
            // keep the connection open to answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
    }

    /// Sets up an accepted connection: its peer's credentials and line framing.
    @Sendable private static func accept(_ channel: any Channel) -> EventLoopFuture<ControlConnection> {
        let credentials: EventLoopFuture<PeerCredentials>
        if let provider = channel as? any SocketOptionProvider {
            credentials = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        } else {
            credentials = channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return credentials.flatMapThrowing { credential in
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: Limits.maxRequestLineBytes)))
            let wrapped = try NIOAsyncChannel<LineFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
            return ControlConnection(channel: wrapped, peer: Peer(uid: credential.uid, pid: credential.pid))
        }
    }

    /// Applies a changed `socket_mode` to the socket file this process created.
    func apply(mode: mode_t) {
        guard ownsPath else { return }
        if chmod(path, mode) != 0 {
            logger.error("cannot change the socket's mode", metadata: ["socket": "\(path)", "error": "\(String(cString: strerror(errno)))"])
        }
    }

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingDiscardingTaskGroup { group in
                    try await self.server.executeThenClose { inbound in
                        for try await connection in inbound {
                            group.addTask { await self.serve(connection) }
                        }
                    }
                }
            }
        } catch is CancellationError {
            // Graceful shutdown: stop accepting; the core checkpoints after this service ends.
        }
        if ownsPath { unlink(path) }
    }

    private func serve(_ connection: ControlConnection) async {
        let count = connections.add(1, ordering: .relaxed).newValue
        defer { connections.subtract(1, ordering: .relaxed) }
        let maxConnections = configuration.current.maxConnections
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                if count > maxConnections {
                    let error = RPCFailure(id: .null, error: RPCError(.limitExceeded, "transferd already serves \(maxConnections) connections (max_connections): close idle clients or raise the limit"))
                    if var line = try? WireCoding.encoder().encode(error) {
                        line.append(UInt8(ascii: "\n"))
                        try await outbound.write(ByteBuffer(bytes: line))
                    }
                    return
                }
                for try await frame in inbound {
                    if let response = await router.respond(to: frame, from: connection.peer) {
                        try await outbound.write(response)
                    }
                }
            }
        } catch {
            logger.debug("connection closed", metadata: ["error": "\(error)", "uid": "\(connection.peer.uid)"])
        }
    }
}
