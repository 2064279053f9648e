import TransferCore

extension DaemonConfiguration {
    /// The configured proxies, for the engine's requests.
    var proxies: Proxies { Proxies(http: httpProxy, https: httpsProxy, none: noProxy) }
}
