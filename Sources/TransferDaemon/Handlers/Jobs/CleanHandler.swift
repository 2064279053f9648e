import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `clean`: forgets the caller's finished jobs (root: everyone's with `all`).
    func clean(_ params: Clean.Params, peer: Peer) async throws(RPCError) -> Clean.Result {
        do {
            let (removed, dropped) = try await manager.clean(
                states: params.states, olderThan: params.olderThanSeconds, all: params.all ?? false, caller: peer.uid)
            return Clean.Result(removed: removed, droppedEvents: dropped)
        } catch {
            throw RPCError(error)
        }
    }
}
