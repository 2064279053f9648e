import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `subscribe`: events of the caller's jobs on this connection, after the answer.
    func subscribe(_ params: Subscribe.Params, peer: Peer, subscriptions: ConnectionSubscriptions) async throws(RPCError) -> Subscribe.Result {
        let current = configuration.current
        try subscriptions.checkRoom(limit: current.maxSubscriptionsPerConnection)
        let subscription: Subscription
        do {
            subscription = try await manager.subscribe(params, caller: peer.uid, queueLimit: current.subscriberQueueEvents)
        } catch {
            throw RPCError(error)
        }
        subscriptions.add(subscription)
        return Subscribe.Result(subscription: subscription.id, replay: subscription.replayCount, seq: subscription.startSeq)
    }
}
