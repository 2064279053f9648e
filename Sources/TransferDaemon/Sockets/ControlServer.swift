import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization
import TransferCore
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
    /// Open connections per peer uid.
    private let connectionsByUser = Mutex<[UInt32: Int]>([:])
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

    /// Binds `path` with the configured group and mode. The file is created owner-only (under a
    /// umask) and opened to the group only once it has its group, so no other group ever reaches it.
    static func bind(path: String, router: RequestRouter, configuration: LiveConfiguration, logger: Logger) async throws -> ControlServer {
        let settings = configuration.current
        let mode = settings.socketModeValue
        guard let group = settings.socketGroupID else {
            throw ConfigurationError(description: "socket_group '\(settings.socketGroup)' names no group: give an existing group or a gid")
        }
        let previous = umask(0o177)
        defer { umask(previous) }
        let server = try await bootstrap(logger: logger).bind(unixDomainSocketPath: path) { accept($0, configuration: configuration) }
        if let problem = SocketGroup.apply(group, to: path, named: settings.socketGroup) {
            try? await server.channel.close()
            unlink(path)
            throw ConfigurationError(description: problem)
        }
        chmod(path, mode)
        return ControlServer(server: server, path: path, ownsPath: true, router: router, configuration: configuration, logger: logger)
    }

    /// Serves on a listening socket systemd passed (socket activation). Its path and mode are the
    /// socket unit's business.
    static func adopt(descriptor: Int32, router: RequestRouter, configuration: LiveConfiguration, logger: Logger) async throws -> ControlServer {
        let server = try await bootstrap(logger: logger).bind(descriptor) { accept($0, configuration: configuration) }
        let path = server.channel.localAddress?.pathname ?? "(passed by systemd)"
        return ControlServer(server: server, path: path, ownsPath: false, router: router, configuration: configuration, logger: logger)
    }

    private static func bootstrap(logger: Logger) -> ServerBootstrap {
        let failures = AcceptFailureLog(listener: "control", logger: logger)
        return ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 128)
            // Out of descriptors, accept fails; SwiftNIO's AcceptBackoffHandler (after this one)
            // retries a second later, and this logs once per run of failures.
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(AcceptFailureHandler(failures)) }
            }
            // A client may send its request and shut down its write side (`socat`, `nc -N`):
            // keep the connection open to answer.
            .childChannelOption(.allowRemoteHalfClosure, value: true)
    }

    /// Sets up an accepted connection: its peer's credentials (read once, here, from the kernel; a
    /// connection whose credentials cannot be read is closed) and line framing.
    private static func accept(_ channel: any Channel, configuration: LiveConfiguration) -> EventLoopFuture<ControlConnection> {
        let credentials: EventLoopFuture<PeerCredentials>
        if let provider = channel as? any SocketOptionProvider {
            credentials = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        } else {
            credentials = channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return credentials.flatMapThrowing { credential in
            let maxLength = configuration.current.maxRequestBytes
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLength: maxLength)))
            let wrapped = try NIOAsyncChannel<LineFrame, ByteBuffer>(wrappingChannelSynchronously: channel)
            return ControlConnection(channel: wrapped, peer: Peer(uid: credential.uid, pid: credential.pid, gid: credential.gid))
        }
    }

    /// Applies a changed `socket_mode` to the socket file this process created.
    func apply(mode: mode_t) {
        guard ownsPath else { return }
        if chmod(path, mode) != 0 {
            logger.error("cannot change the socket's mode", metadata: ["socket": "\(path)", "error": "\(String(cString: strerror(errno)))"])
        }
    }

    /// Applies a changed `socket_group` (`named`, empty for the daemon's own) to the socket file
    /// this process created.
    func apply(group: gid_t, named: String) {
        guard ownsPath else { return }
        if let problem = SocketGroup.apply(group, to: path, named: named) {
            logger.error("cannot change the socket's group", metadata: ["socket": "\(path)", "error": "\(problem)"])
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
        let uid = connection.peer.uid
        let count = connections.add(1, ordering: .relaxed).newValue
        DaemonMetrics.connectionOpened()
        let userCount = connectionsByUser.withLock { counts in
            counts[uid, default: 0] += 1
            return counts[uid, default: 0]
        }
        defer {
            connections.subtract(1, ordering: .relaxed)
            DaemonMetrics.connectionClosed()
            connectionsByUser.withLock { counts in
                counts[uid, default: 1] -= 1
                if counts[uid] == 0 { counts[uid] = nil }
            }
        }
        let current = configuration.current
        var refusal: RPCError?
        if count > current.maxConnections {
            refusal = RPCError(
                .limitExceeded, "transferd already serves \(current.maxConnections) connections (max_connections): close idle clients or raise the limit")
        } else if uid != 0, count > current.maxConnections - current.rootReservedConnections {
            // The last slots stay free for root, so that an administrator can always get in.
            refusal = RPCError(
                .limitExceeded,
                "transferd already serves \(count - 1) connections; the last \(current.rootReservedConnections) of max_connections "
                    + "(\(current.maxConnections)) are kept for root (root_reserved_connections): close idle clients or raise max_connections")
        } else if userCount > current.maxConnectionsPerUser {
            refusal = RPCError(
                .limitExceeded,
                "user \(uid) already has \(current.maxConnectionsPerUser) connections to transferd (max_connections_per_user): close idle clients or raise the limit")
        }
        do {
            try await connection.channel.executeThenClose { inbound, outbound in
                if let refusal {
                    // Written and flushed before the connection closes: the client always learns why.
                    if let line = WireLine.encode(RPCFailure(id: .null, error: refusal)) {
                        try await connection.channel.channel.writeAndFlush(line)
                    }
                    return
                }
                let subscriptions = ConnectionSubscriptions(channel: connection.channel.channel, peer: connection.peer, logger: logger)
                defer { subscriptions.endAll() }
                let activity = ConnectionActivity()
                let idleWatch = Task { await self.closeWhenIdle(subscriptions, activity: activity) }
                defer { idleWatch.cancel() }
                try await withThrowingDiscardingTaskGroup { group in
                    let answers = PipelinedAnswers(activity: activity)
                    group.addTask { await answers.write { try await outbound.write(contentsOf: $0) } }
                    defer { answers.finish() }
                    for try await frame in inbound {
                        activity.touch()
                        guard !subscriptions.isClosing else { break }
                        let prepared = router.prepare(frame)
                        if prepared.runsConcurrently {
                            // Pipelined submits run side by side and share syncs; answers keep their order.
                            try await answers.add { await self.router.respond(to: prepared, from: connection.peer, subscriptions: subscriptions) }
                            continue
                        }
                        // Anything else runs alone, after every earlier request was answered.
                        try await answers.drain()
                        activity.busy(true)
                        defer { activity.busy(false) }
                        if let response = await router.respond(to: prepared, from: connection.peer, subscriptions: subscriptions) {
                            try await outbound.write(response)
                        }
                        // Streams start after their subscribe answer, so the answer comes first.
                        for subscription in subscriptions.takeUnstarted() {
                            group.addTask { await subscriptions.pump(subscription, into: outbound) }
                        }
                    }
                    // The client finished sending (it may have shut down only its write side):
                    // its subscriptions go on until they end or the connection breaks.
                }
            }
        } catch {
            logger.debug("connection closed", metadata: ["error": "\(error)", "uid": "\(connection.peer.uid)"])
        }
    }

    /// Closes the connection, with a last notification saying why, once it has sent nothing for
    /// `control_idle_timeout_seconds` while no request is being answered and it follows no
    /// subscription (a subscriber waits for events, not idly). Ends when cancelled.
    private func closeWhenIdle(_ subscriptions: ConnectionSubscriptions, activity: ConnectionActivity) async {
        while !Task.isCancelled {
            let timeout = UInt64(configuration.current.controlIdleTimeoutSeconds) * 1_000_000_000
            let idle = activity.idleNanoseconds()
            if idle >= timeout, !activity.isBusy, !subscriptions.hasSubscriptions {
                let seconds = timeout / 1_000_000_000
                subscriptions.close(
                    saying: Disconnect(
                        reason: "idle_timeout",
                        message: "this connection sent no request for \(seconds) s and follows no subscription, so transferd closed it "
                            + "(control_idle_timeout_seconds); connect again when you have a request"))
                return
            }
            let wait = idle >= timeout ? timeout : timeout - idle
            do { try await Task.sleep(for: .nanoseconds(Int64(min(wait, 60_000_000_000)) + 1_000_000)) } catch { return }
        }
    }
}

/// When a connection last sent a request line, and whether one is being answered.
final class ConnectionActivity: Sendable {
    private let last = Atomic<UInt64>(MonotonicClock.nanoseconds())
    private let answering = Atomic<Bool>(false)

    func touch() { last.store(MonotonicClock.nanoseconds(), ordering: .relaxed) }
    func busy(_ flag: Bool) {
        answering.store(flag, ordering: .relaxed)
        touch()
    }
    var isBusy: Bool { answering.load(ordering: .relaxed) }
    /// How long since the last request or answer. A request that arrives while this is read
    /// (touched after the clock was read) counts as none: 0, not a wrapped-around difference
    /// that would read as centuries idle and close the connection.
    func idleNanoseconds() -> UInt64 {
        let then = last.load(ordering: .relaxed)
        let now = MonotonicClock.nanoseconds()
        return now > then ? now - then : 0
    }
}
