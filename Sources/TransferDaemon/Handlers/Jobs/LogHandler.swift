import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `log`: the attempts of a job the caller may see.
    func log(_ params: Log.Params, peer: Peer) async throws(RPCError) -> Log.Result {
        do {
            return try await manager.log(id: params.id, caller: peer.uid)
        } catch {
            throw RPCError(error)
        }
    }
}
