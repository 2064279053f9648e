import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `cancel`: stops a job the caller may see.
    func cancel(_ params: Cancel.Params, peer: Peer) async throws(RPCError) -> Cancel.Result {
        do {
            return Cancel.Result(job: try await manager.cancel(id: params.id, caller: peer.uid))
        } catch {
            throw RPCError(error)
        }
    }
}
