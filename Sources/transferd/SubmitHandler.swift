import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `submit`: the job belongs to the connecting user, who must be allowed to write where it lands.
    func submit(_ params: Submit.Params, peer: Peer) async throws(RPCError) -> Submit.Result {
        Submit.Result(job: try await manager.submit(params, owner: peer.uid, group: peer.gid))
    }
}
