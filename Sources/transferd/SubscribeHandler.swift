import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `subscribe`: events of the caller's jobs on this connection, after the answer.
    func subscribe(_ params: Subscribe.Params, peer: Peer, subscriptions: ConnectionSubscriptions) async throws(RPCError) -> Subscribe.Result {
        let current = configuration.current
        let limit = current.maxSubscriptionsPerConnection
        guard subscriptions.hasRoom(limit: limit) else {
            throw RPCError(
                .limitExceeded,
                "this connection already has \(limit) subscriptions (max_subscriptions_per_connection): "
                    + "unsubscribe from one, use one subscription with several ids, or open another connection")
        }
        let subscription = try await manager.subscribe(params, caller: peer.uid, queueLimit: current.subscriberQueueEvents)
        try subscriptions.add(subscription, limit: limit)
        return Subscribe.Result(subscription: subscription.id, replay: subscription.replayCount, seq: subscription.startSeq)
    }
}
