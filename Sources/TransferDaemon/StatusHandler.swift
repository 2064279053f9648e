import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `status`: one job or a list, limited to what the caller may see.
    func status(_ params: Status.Params, peer: Peer) async throws(RPCError) -> Status.Result {
        do {
            return Status.Result(jobs: try await manager.status(id: params.id, states: params.states, caller: peer.uid, all: params.all ?? false))
        } catch {
            throw RPCError(error)
        }
    }
}
