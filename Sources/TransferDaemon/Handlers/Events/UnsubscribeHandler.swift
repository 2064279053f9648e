import TransferProtocol

extension RequestRouter {
    /// `unsubscribe`: ends one of this connection's subscriptions.
    func unsubscribe(_ params: Unsubscribe.Params, subscriptions: ConnectionSubscriptions) throws(RPCError) -> Unsubscribe.Result {
        guard subscriptions.cancel(id: params.subscription) else {
            throw RPCError(.invalidParams, "this connection has no subscription \(params.subscription): use the number subscribe answered with")
        }
        return Unsubscribe.Result()
    }
}
