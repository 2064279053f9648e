public import NIOCore
import NIOHTTP1
import NIOPosix

/// An HTTP/1.1 server on 127.0.0.1 for tests, serving ``TestContent`` at registered paths, each
/// well-behaved or misbehaving on purpose (see ``Behaviour``).
///
/// It records every request, counts the body bytes it sent per path, keeps connections alive when the
/// client asks, and streams bodies in chunks with back-pressure (a 1 GiB body is never held in memory).
/// Unknown paths get 404. Always call ``shutdown()`` at the end.
public final class TestHTTPServer: Sendable {
    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    /// The host the server listens on: `127.0.0.1`.
    public let host: String

    private let channel: any Channel
    let state: ServerState

    private init(channel: any Channel, state: ServerState, host: String, port: Int) {
        self.channel = channel
        self.state = state
        self.host = host
        self.port = port
    }

    /// Starts a server on 127.0.0.1 (or `host`) and an ephemeral port.
    ///
    /// - Parameters:
    ///   - chunkSize: The size of body writes (trickling writes smaller ones).
    ///   - group: The event loops to run on; NIO's shared singleton when nil.
    ///   - host: The address to listen on, e.g. another loopback address such as `127.0.0.2`.
    public static func start(
        chunkSize: Int = 64 * 1024,
        group: (any EventLoopGroup)? = nil,
        host: String = "127.0.0.1"
    ) async throws -> TestHTTPServer {
        let group = group ?? MultiThreadedEventLoopGroup.singleton
        let state = ServerState()
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    guard state.track(channel) else {
                        channel.close(promise: nil)
                        return
                    }
                    channel.closeFuture.whenComplete { _ in state.untrack(channel) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        HTTPRequestHandler(state: state, chunkSize: chunkSize)
                    )
                }
            }
            .bind(host: host, port: 0)
            .get()
        guard let port = channel.localAddress?.port else {
            try? await channel.close()
            throw TestHTTPServerError.noLocalPort
        }
        return TestHTTPServer(channel: channel, state: state, host: host, port: port)
    }

    /// Stops listening and closes every open connection.
    public func shutdown() async throws {
        do {
            try await channel.close()
        } catch ChannelError.alreadyClosed {
            // Shut down before.
        }
        for connection in state.beginClosing() {
            try? await connection.close()
        }
        state.resumable.removeAll()
    }

    /// `http://<host>:<port>`.
    public var baseURL: String { "http://\(host):\(port)" }

    /// The absolute URL of `path` (which should start with `/`) on this server.
    public func url(_ path: String) -> String {
        baseURL + (path.hasPrefix("/") ? path : "/" + path)
    }

    /// Serves `content` at `path` (query strings are ignored when routing) with `behaviour`.
    /// Registering a path again replaces it and restarts its request counters; the request log and
    /// byte counts are kept. Safe to call at any time, from any thread.
    public func serve(_ path: String, content: TestContent, behaviour: Behaviour = .normal) {
        state.register(path, content: content, behaviour: behaviour)
    }

    /// Makes `path` redirect to `location` (sent verbatim) with `status`.
    public func redirect(_ path: String, to location: String, status: Int = 302) {
        state.register(path, content: TestContent(seed: 0, size: 0), behaviour: .redirect(to: location, status: status))
    }

    /// Stops serving `path` (it answers 404 again).
    public func remove(_ path: String) {
        state.unregister(path)
    }

    /// The content `path` currently serves (the replacement once `changeETagAfter` has switched), if any.
    public func content(for path: String) -> TestContent? {
        state.content(for: path)
    }

    /// The requests received for `path` (query ignored), oldest first, including those answered 404.
    public func requests(for path: String) -> [RecordedRequest] {
        state.requests(for: path)
    }

    /// Every request received, oldest first.
    public func allRequests() -> [RecordedRequest] {
        state.requests(for: nil)
    }

    /// Takes PUT, POST and PATCH bodies at `path` (query ignored), counting and hashing what
    /// arrives, treated as `behaviour` says. Other methods at `path` are served as before.
    public func acceptUploads(_ path: String, behaviour: UploadBehaviour = .normal) {
        state.uploads.register(path, behaviour: behaviour)
    }

    /// The uploads received at `path`, oldest first (dropped ones included).
    public func uploads(for path: String) -> [ReceivedUpload] {
        state.uploads.received(for: path)
    }

    /// Body bytes written to the socket for `path`, over all its responses.
    public func bytesSent(for path: String) -> Int64 {
        state.bytesSent(for: path)
    }
}

/// Why ``TestHTTPServer`` could not start.
public enum TestHTTPServerError: Error, Sendable {
    /// The bound socket reported no port.
    case noLocalPort
}
