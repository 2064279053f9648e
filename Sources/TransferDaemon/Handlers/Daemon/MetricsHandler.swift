import TransferProtocol

extension RequestRouter {
    /// `metrics`: the Prometheus text, for `transferctl metrics` and node_exporter's textfile
    /// collector. Every user who may connect may read them: they are daemon-wide counts, naming
    /// no job, URL or user.
    func metrics(_ params: MetricsMethod.Params, peer: Peer) async throws(RPCError) -> MetricsMethod.Result {
        MetricsMethod.Result(text: await DaemonMetrics.scrape(manager), contentType: DaemonMetrics.contentType)
    }
}
