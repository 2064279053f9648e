import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `priority`: changes the class of a job the caller may see.
    func priority(_ params: PriorityMethod.Params, peer: Peer) async throws(RPCError) -> PriorityMethod.Result {
        do {
            return PriorityMethod.Result(job: try await manager.setPriority(id: params.id, to: params.priority, caller: peer.uid))
        } catch {
            throw RPCError(error)
        }
    }
}
