import Testing
import TransferCore
import TransferDaemon

/// What `local_addresses: "auto"` means, and the host policy a configuration makes.
@Suite("Daemon configuration: hosts")
struct DaemonConfigurationHostsTests {
    @Test func autoDeniesLocalAddressesForTheSystemServiceOnly() {
        #expect(DaemonRole.detect(systemFlag: true, environment: [:], stateDirectory: nil) == .systemService, "transferd --system")
        #expect(DaemonRole.detect(systemFlag: false, environment: [:], stateDirectory: nil) == .user, "by hand, root included")
        #expect(DaemonRole.detect(systemFlag: false, environment: [:], stateDirectory: "/var/lib/transferd") == .systemService)
        #expect(DaemonRole.detect(systemFlag: false, environment: ["TRANSFERD_STATE_DIR": "/var/lib/transferd"], stateDirectory: nil) == .systemService)
        #expect(DaemonRole.detect(systemFlag: false, environment: ["RUNTIME_DIRECTORY": "/run/transferd"], stateDirectory: nil) == .systemService, "systemd's system manager")
        #expect(DaemonRole.detect(systemFlag: false, environment: ["RUNTIME_DIRECTORY": "/run/user/1000/transferd"], stateDirectory: nil) == .user, "a user manager")
        #expect(DaemonRole.detect(systemFlag: false, environment: [:], stateDirectory: "/home/ann/.local/state/transferd") == .user)
        var configuration = DaemonConfiguration()
        #expect(configuration.deniesLocalAddresses(.systemService) && !configuration.deniesLocalAddresses(.user))
        configuration.localAddresses = "deny"
        #expect(configuration.deniesLocalAddresses(.user))
        configuration.localAddresses = "allow"
        #expect(!configuration.deniesLocalAddresses(.systemService))
        configuration.deniedHosts = ["10.0.0.0/8"]
        let policy = configuration.hostPolicy(.systemService, file: "/etc/transferd/transferd.json")
        #expect(policy.denied == [HostRule("10.0.0.0/8")].compactMap { $0 })
        #expect(policy.source.contains("/etc/transferd/transferd.json"))
    }
}
