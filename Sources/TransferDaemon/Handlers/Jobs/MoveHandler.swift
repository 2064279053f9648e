import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `move`: changes the position of a job the caller may see within its class.
    func move(_ params: Move.Params, peer: Peer) async throws(RPCError) -> Move.Result {
        do {
            return Move.Result(job: try await manager.move(params, caller: peer.uid))
        } catch {
            throw RPCError(error)
        }
    }
}
