import TransferCore

extension DaemonConfiguration {
    /// The configured proxies, for the engine's requests.
    var proxies: Proxies { Proxies(http: httpProxy, https: httpsProxy, none: noProxy) }

    /// Gives the engine's requests the configured proxies, CA certificates and client certificates.
    /// Throws, naming the key, when a file cannot be read: start-up stops, a reload is refused.
    func applyNetworkSettings() throws(TrustError) {
        try Trust.configure(caFile: caFile, clientCertificates: clientCertificates)
        proxies.use()
    }

    /// Reads `client_certificates` of the configuration file (empty when absent): an object of hosts,
    /// each with the PEM files of its certificate and key.
    static func parseClientCertificates(_ value: Any?, file: String) throws -> [ClientCertificate] {
        guard let value else { return [] }
        let example = #""client_certificates": {"api.example.com": {"certificate": "/etc/transferd/client.pem", "key": "/etc/transferd/client.key"}}"#
        let entries = try NamedEntry.parse(
            value, key: "client_certificates", file: file, shape: "an object of host names, e.g. \(example)",
            entryShape: "must be an object with certificate and key, e.g. \(example)", fields: ["certificate", "key"])
        return try entries.map { entry in
            guard let certificate = entry.fields["certificate"] as? String, certificate.hasPrefix("/"),
                let key = entry.fields["key"] as? String, key.hasPrefix("/")
            else { throw entry.problem("certificate and key must be absolute paths of PEM files, e.g. \(example)") }
            guard !entry.name.isEmpty, !entry.name.contains(where: { $0 == "\t" || $0 == "\n" || $0 == "/" || $0 == ":" }) else {
                throw entry.problem("the name must be a host name or address, as in the URLs")
            }
            return ClientCertificate(host: entry.name, certificate: certificate, key: key)
        }
    }
}
