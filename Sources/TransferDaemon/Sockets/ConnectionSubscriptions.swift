import Foundation
import Logging
import NIOCore
import Synchronization
import TransferCore
import TransferProtocol

/// The subscriptions of one connection. Each starts streaming only after its `subscribe` answer
/// is written, so the answer always comes first; all end with the connection.
final class ConnectionSubscriptions: Sendable {
    private struct State {
        var active: [Int: Subscription] = [:]
        var unstarted: [Subscription] = []
    }

    private let state = Mutex(State())
    private let closing = Atomic<Bool>(false)
    private let channel: any Channel
    private let logger: Logger
    /// How long a client that stopped reading gets to take its last notification before the
    /// connection is closed anyway.
    static let lastWordTimeout: TimeAmount = .seconds(30)

    init(channel: any Channel, peer: Peer, logger: Logger) {
        self.channel = channel
        var logger = logger
        logger[metadataKey: "uid"] = "\(peer.uid)"
        logger[metadataKey: "pid"] = "\(peer.pid)"
        self.logger = logger
    }

    /// Adds a subscription to start once its answer is out. Requests on a connection are served
    /// one at a time, so room found by `checkRoom` is still there.
    func add(_ subscription: Subscription) {
        state.withLock { state in
            state.active[subscription.id] = subscription
            state.unstarted.append(subscription)
        }
    }

    /// Refuses another subscription when the connection already has `limit`.
    func checkRoom(limit: Int) throws(RPCError) {
        guard state.withLock({ $0.active.count >= limit }) else { return }
        throw RPCError(
            .limitExceeded,
            "this connection already has \(limit) subscriptions (max_subscriptions_per_connection): "
                + "unsubscribe from one, use one subscription with several ids, or open another connection")
    }

    /// The subscriptions whose answers have just been written.
    func takeUnstarted() -> [Subscription] {
        state.withLock { state in
            defer { state.unstarted = [] }
            return state.unstarted
        }
    }

    /// Ends one subscription; false when the connection has none with that id.
    func cancel(id: Int) -> Bool {
        guard let subscription = state.withLock({ $0.active.removeValue(forKey: id) }) else { return false }
        subscription.end(.cancelled)
        return true
    }

    /// Ends every subscription (the connection is closing).
    func endAll() {
        let all = state.withLock { state in
            defer { state.active = [:]; state.unstarted = [] }
            return Array(state.active.values)
        }
        all.forEach { $0.end(.cancelled) }
    }

    var isClosing: Bool { closing.load(ordering: .relaxed) }

    /// Whether the connection follows at least one subscription.
    var hasSubscriptions: Bool { state.withLock { !$0.active.isEmpty } }

    /// Streams a started subscription into the connection until it ends.
    func pump(_ subscription: Subscription, into outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async {
        // When the client stops reading, the write below blocks; an overflow then closes the
        // connection from the publishing side, with the last notification written past the block.
        subscription.onOverflow { [self] end in close(saying: end.disconnect) }
        while let item = await subscription.next() {
            let line: ByteBuffer?
            switch item {
            case .event(var event):
                event.subscription = subscription.id
                line = WireLine.encode(RPCNotification(method: NotificationMethod.event, params: event))
            case .caughtUp(let caughtUp):
                line = WireLine.encode(RPCNotification(method: NotificationMethod.caughtUp, params: caughtUp))
            }
            guard let line else { continue }
            do {
                try await outbound.write(line)
            } catch {
                subscription.end(.cancelled)
                break
            }
        }
        _ = state.withLock { $0.active.removeValue(forKey: subscription.id) }
        if let disconnect = subscription.ending?.disconnect { close(saying: disconnect) }
    }

    /// Writes a last notification (when given) straight into the channel and closes it once that
    /// is written, or after `lastWordTimeout` when the client does not read. Runs once.
    func close(saying disconnect: Disconnect?) {
        guard closing.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        if let disconnect {
            logger.log(
                level: disconnect.reason == "shutting_down" ? .info : .warning, "closing a connection with subscriptions",
                metadata: ["reason": "\(disconnect.reason)"])
        }
        endAll()
        let channel = self.channel
        let line = disconnect.flatMap { WireLine.encode(RPCNotification(method: NotificationMethod.disconnect, params: $0)) }
        channel.eventLoop.execute {
            guard let line else {
                channel.close(promise: nil)
                return
            }
            let deadline = channel.eventLoop.scheduleTask(in: Self.lastWordTimeout) { channel.close(promise: nil) }
            channel.writeAndFlush(line).whenComplete { _ in
                deadline.cancel()
                channel.close(promise: nil)
            }
        }
    }
}
