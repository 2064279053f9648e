import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `pause`: holds the jobs the caller may see that the params name (root with `all`: every
    /// job, and new transfers too).
    func pause(_ params: Pause.Params, peer: Peer) async throws(RPCError) -> Pause.Result {
        do {
            return try await manager.pause(params, caller: peer.uid)
        } catch {
            throw RPCError(error)
        }
    }
}
