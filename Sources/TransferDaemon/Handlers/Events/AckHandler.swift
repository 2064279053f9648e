import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `ack`: the caller's session has its terminal events up to `seq`.
    func ack(_ params: Ack.Params, peer: Peer) async throws(RPCError) -> Ack.Result {
        do {
            return Ack.Result(acknowledged: try await manager.ack(session: params.session, through: params.seq, caller: peer.uid))
        } catch {
            throw RPCError(error)
        }
    }
}
