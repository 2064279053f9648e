import TransferCore
import TransferProtocol

extension RequestRouter {
    /// `version`: the daemon's and the protocol's versions.
    func version(_ params: Version.Params, peer: Peer) async throws(RPCError) -> Version.Result {
        Version.Result(daemon: transferdVersion, protocol: transferProtocolVersion)
    }
}
