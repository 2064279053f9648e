import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `remove`: forgets a finished job the caller may see.
    func remove(_ params: Remove.Params, peer: Peer) async throws(RPCError) -> Remove.Result {
        do {
            let (job, dropped) = try await manager.remove(id: params.id, caller: peer.uid)
            return Remove.Result(job: job, droppedEvent: dropped)
        } catch {
            throw RPCError(error)
        }
    }
}
