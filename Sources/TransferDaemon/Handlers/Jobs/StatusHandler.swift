import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `status`: one job or a page of jobs, limited to what the caller may see.
    func status(_ params: Status.Params, peer: Peer) async throws(RPCError) -> Status.Result {
        do {
            return try await manager.status(params, caller: peer.uid)
        } catch {
            throw RPCError(error)
        }
    }
}
