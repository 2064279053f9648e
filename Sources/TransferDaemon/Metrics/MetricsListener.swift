import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// `metrics_listen`: `HOST:PORT` or `[IPv6]:PORT` (port 0: any free one, logged at start).
package struct MetricsListenAddress: Equatable, Sendable, CustomStringConvertible {
    package var host: String
    package var port: Int

    package init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard !hostPart.isEmpty, !hostPart.contains(where: \.isWhitespace), portPart.allSatisfy(\.isASCII),
            let port = Int(portPart), (0...65535).contains(port)
        else { return nil }
        host = String(hostPart)
        self.port = port
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// What `metrics_listen` must look like, for messages.
    static let expected = "HOST:PORT such as \"127.0.0.1:9464\" or \"[::1]:9464\", or \"\" for no listener"
}

/// Serves `GET /metrics` over HTTP for Prometheus to scrape, when `metrics_listen` asks for it.
/// Bound before the service group runs, so a port in use stops start-up with a clear message.
final class MetricsListener: Service {
    private let channel: any Channel
    /// The address bound, with the port chosen when 0 was asked for.
    let address: String

    private init(channel: any Channel, address: String) {
        self.channel = channel
        self.address = address
    }

    /// Listens on `listen` (`metrics_listen`); nil when it is empty.
    ///
    /// Each connection costs a descriptor, so they are bounded as the control socket's are: one
    /// beyond `metrics_max_connections` gets a `503` and is closed at once, and one that reads or
    /// sends nothing for `metrics_idle_timeout_seconds` is closed (Prometheus reconnects).
    static func bind(_ listen: String, configuration: LiveConfiguration, manager: TransferManager, logger: Logger) async throws -> MetricsListener? {
        guard !listen.isEmpty else { return nil }
        guard let address = MetricsListenAddress(listen) else {
            throw ConfigurationError(description: "metrics_listen is '\(listen.prefix(100))': expected \(MetricsListenAddress.expected)")
        }
        let slots = SharedConnectionSlots()
        let failures = AcceptFailureLog(listener: "metrics", logger: logger)
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Out of descriptors, accept fails: wait a second and try again (the
                        // listener stays up), logging once per run of failures.
                        try channel.pipeline.syncOperations.addHandler(AcceptFailureHandler(failures))
                        try channel.pipeline.syncOperations.addHandler(AcceptBackoffHandler(shouldForwardIOErrorCaught: false))
                    }
                }
                // Requests are a few hundred bytes: small reads bound what a client that pipelines
                // requests makes the daemon decode and hold before it stops reading.
                .childChannelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 4096))
                .childChannelOption(.maxMessagesPerRead, value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.setUp(channel, slots: slots, settings: configuration.current, manager: manager)
                    }
                }
                .bind(host: address.host, port: address.port)
                .get()
        } catch {
            let reason: String
            if let error = error as? IOError {
                reason = String(cString: strerror(error.errnoCode))
            } else {
                reason = "\(error)"
            }
            throw ConfigurationError(
                description: "cannot serve metrics on \(address) (metrics_listen): \(reason); choose a free port on an address of "
                    + "this machine, or set metrics_listen to \"\" to turn the listener off")
        }
        var bound = address
        bound.port = channel.localAddress?.port ?? address.port
        return MetricsListener(channel: channel, address: bound.description)
    }

    /// Sets up an accepted connection: a refusal beyond the limit, else HTTP with an idle timeout.
    private static func setUp(_ channel: any Channel, slots: SharedConnectionSlots, settings: DaemonConfiguration, manager: TransferManager) throws {
        let limit = settings.metricsMaxConnections
        guard slots.admit(user: nil, limit: limit) == .admitted else {
            try channel.pipeline.syncOperations.addHandler(MetricsRefusalHandler(limit: limit))
            return
        }
        channel.closeFuture.whenComplete { _ in slots.release(user: nil) }
        let idle = TimeAmount.seconds(Int64(settings.metricsIdleTimeoutSeconds))
        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: idle))
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
        try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(manager: manager))
    }

    func run() async throws {
        // Serves on the event loops until the daemon stops.
        try? await gracefulShutdown()
        try? await channel.close()
    }
}
