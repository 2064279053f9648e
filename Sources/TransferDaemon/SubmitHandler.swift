import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `submit`: the job belongs to the connecting user, who must be allowed to write where it lands.
    func submit(_ params: Submit.Params, peer: Peer) async throws(RPCError) -> Submit.Result {
        do {
            return Submit.Result(job: try await manager.submit(params, owner: peer.uid, group: peer.gid))
        } catch {
            throw RPCError(error)
        }
    }
}

extension RequestRouter {
    /// The submits of a batch: their jobs are written to the journal together and synced once.
    func submit(_ batch: [Submit.Params], peer: Peer) async -> [Result<Submit.Result, RPCError>] {
        await manager.submit(batch, owner: peer.uid, group: peer.gid).map { $0.map(Submit.Result.init(job:)).mapError(RPCError.init) }
    }
}
