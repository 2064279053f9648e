import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `resume`: queues the paused jobs the caller may see that the params name again (root with
    /// `all`: every job, and lifts the hold on new transfers).
    func resume(_ params: Resume.Params, peer: Peer) async throws(RPCError) -> Resume.Result {
        do {
            return try await manager.resume(params, caller: peer.uid)
        } catch {
            throw RPCError(error)
        }
    }
}
