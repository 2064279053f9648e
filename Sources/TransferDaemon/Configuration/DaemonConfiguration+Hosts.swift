package import TransferCore

extension DaemonConfiguration {
    /// Whether URLs may reach loopback, link-local and unspecified addresses: `deny`, `allow`, or
    /// `auto`, which denies them for the system service (so that no user reaches the machine's
    /// own services or the cloud metadata service through it) and allows them for a user's own
    /// daemon (which can reach nothing its user could not).
    package func deniesLocalAddresses(_ role: DaemonRole) -> Bool {
        switch localAddresses {
        case "allow": return false
        case "deny": return true
        default: return role == .systemService
        }
    }

    /// The host rules this configuration sets; `file` is the configuration file, if any, for messages.
    package func hostPolicy(_ role: DaemonRole, file: String?) -> HostPolicy {
        let setting = localAddresses == "auto"
            ? "\"auto\" (deny for the system service)" : "\"\(localAddresses)\""
        return HostPolicy(
            allowed: allowedHosts.compactMap(HostRule.init), denied: deniedHosts.compactMap(HostRule.init),
            deniesLocalAddresses: deniesLocalAddresses(role), localAddressesSetting: setting,
            source: file.map { "the configuration (\($0))" } ?? "the configuration (the built-in defaults: no configuration file)")
    }
}
