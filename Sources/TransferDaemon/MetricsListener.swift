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
    static func bind(_ listen: String, manager: TransferManager) async throws -> MetricsListener? {
        guard !listen.isEmpty else { return nil }
        guard let address = MetricsListenAddress(listen) else {
            throw ConfigurationError(description: "metrics_listen is '\(listen.prefix(100))': expected \(MetricsListenAddress.expected)")
        }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(manager: manager))
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

    func run() async throws {
        // Serves on the event loops until the daemon stops.
        try? await gracefulShutdown()
        try? await channel.close()
    }
}

/// Answers one HTTP connection: `GET` or `HEAD /metrics` with the text format; 404 elsewhere, 405
/// for other methods.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let manager: TransferManager
    private var request: HTTPRequestHead?

    init(manager: TransferManager) {
        self.manager = manager
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard head.method == .GET || head.method == .HEAD else {
            send(head, .methodNotAllowed, "transferd serves its metrics to GET /metrics\n", extra: [("Allow", "GET, HEAD")], context: context)
            return
        }
        let path = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard path == "/metrics" else {
            send(head, .notFound, "transferd serves its metrics at /metrics\n", context: context)
            return
        }
        let manager = self.manager
        let text = context.eventLoop.makePromise(of: String.self)
        text.completeWithTask { await DaemonMetrics.scrape(manager) }
        text.futureResult.assumeIsolated().whenSuccess { text in
            self.send(head, .ok, text, contentType: DaemonMetrics.contentType, context: context)
        }
    }

    private func send(
        _ head: HTTPRequestHead, _ status: HTTPResponseStatus, _ body: String, contentType: String = "text/plain; charset=utf-8",
        extra: [(String, String)] = [], context: ChannelHandlerContext
    ) {
        let keepAlive = head.isKeepAlive
        var headers = HTTPHeaders([("Content-Type", contentType), ("Content-Length", "\(body.utf8.count)")] + extra)
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if !keepAlive { context.close(promise: nil) }
        }
    }
}
