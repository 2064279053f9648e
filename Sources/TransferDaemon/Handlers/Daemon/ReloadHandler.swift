import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

extension RequestRouter {
    /// `reload`: reads the configuration again and answers once it is applied, or with
    /// `configuration_invalid` naming the key. Only root and the daemon's own user (as
    /// `ExecReload=` runs) may ask: a group member may submit, not reconfigure.
    func reload(_ params: Reload.Params, peer: Peer) async throws(RPCError) -> Reload.Result {
        guard peer.uid == 0 || peer.uid == getuid() else {
            throw RPCError(
                .notPermitted,
                "only root and the daemon's own user may reload its configuration: use `sudo systemctl reload transferd` (or `systemctl --user reload transferd` for your own daemon)")
        }
        do {
            let outcome = try await reloader.reload()
            return Reload.Result(applied: outcome.applied, pending: outcome.pending, config: outcome.file)
        } catch {
            throw RPCError(.configurationInvalid, "the configuration was not reloaded, the previous one stays in effect: \(error)")
        }
    }
}
