import NIOCore
import NIOHTTP1
import TransferCore

/// Answers one HTTP connection: `GET` or `HEAD /metrics` with the text format; 404 elsewhere, 405
/// for other methods.
///
/// One answer at a time, and none before the previous one reached the socket: a client that
/// pipelines requests without reading the answers stops being read from (the
/// `HTTPServerPipelineHandler` before this one reads nothing while an answer is unfinished), so it
/// fills its own socket buffers, not the daemon's memory. The idle timeout then closes it.
final class MetricsHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// Bytes of request body ignored before the connection is closed: scrapes have none.
    static let maxBodyBytes = 64 << 10

    private let manager: TransferManager
    /// The request being received.
    private var request: HTTPRequestHead?
    private var bodyBytes = 0
    /// Whether an answer was written and has not reached the socket yet.
    private var sending = false
    /// A complete request that waits for the previous answer to reach the socket.
    private var waiting: HTTPRequestHead?

    init(manager: TransferManager) {
        self.manager = manager
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
            bodyBytes = 0
        case .body(let bytes):
            bodyBytes += bytes.readableBytes
            if bodyBytes > Self.maxBodyBytes { context.close(promise: nil) }
        case .end:
            guard let head = request else { return }
            request = nil
            if sending {
                waiting = head
            } else {
                respond(to: head, context: context)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            // Nothing read or written for metrics_idle_timeout_seconds: a client that does not read
            // its answers, or holds a connection without asking, gives its slot back.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        sending = true
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
            guard context.channel.isActive else { return }
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
        // Completes when the last byte is in the socket: only then is the next request answered.
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { result in
            self.sending = false
            guard case .success = result, keepAlive else {
                context.close(promise: nil)
                return
            }
            if let next = self.waiting {
                self.waiting = nil
                self.respond(to: next, context: context)
            }
        }
    }
}

/// Answers a connection beyond `metrics_max_connections` with a `503` and closes it, so that the
/// connections a client holds never cost the daemon more than the limit's descriptors.
final class MetricsRefusalHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func channelActive(context: ChannelHandlerContext) {
        let body = "transferd already serves \(limit) metrics connections (metrics_max_connections): close idle ones or raise the limit\n"
        let response = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Connection: close\r\nRetry-After: 1\r\n\r\n" + body
        context.writeAndFlush(NIOAny(context.channel.allocator.buffer(string: response))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // The request is not read: the answer is the same whatever it asks.
    }
}
