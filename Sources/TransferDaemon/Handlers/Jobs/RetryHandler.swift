import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `retry`: queues a failed or cancelled job the caller may see again.
    func retry(_ params: Retry.Params, peer: Peer) async throws(RPCError) -> Retry.Result {
        do {
            return Retry.Result(job: try await manager.retry(id: params.id, caller: peer.uid))
        } catch {
            throw RPCError(error)
        }
    }
}
