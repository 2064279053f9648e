import Foundation
import Testing
import TransferCore
import TransferDaemon
#if canImport(Glibc)
import Glibc
#endif

/// How the host-rule and socket-group keys are read, and what `local_addresses: "auto"` means.
@Suite("Host and socket configuration")
struct HostConfigurationTests {
    private func load(_ json: String, environment: [String: String] = [:]) async throws -> DaemonConfiguration {
        let path = "/tmp/td-hostconfig-\(UUID().uuidString.prefix(8)).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        return try await DaemonConfiguration.load(path: path, environment: environment).0
    }

    @Test func listsComeFromTheFileOrCommaSeparatedFromTheEnvironment() async throws {
        let fromFile = try await load(#"{"allowed_hosts": ["deb.debian.org", "*.example.com"], "denied_hosts": ["10.0.0.0/8", "fd00::/8"]}"#)
        #expect(fromFile.allowedHosts == ["deb.debian.org", "*.example.com"])
        #expect(fromFile.deniedHosts == ["10.0.0.0/8", "fd00::/8"])
        let fromEnvironment = try await load("{}", environment: ["TRANSFERD_DENIED_HOSTS": "10.0.0.0/8, *.internal.example", "TRANSFERD_ALLOWED_HOSTS": ""])
        #expect(fromEnvironment.deniedHosts == ["10.0.0.0/8", "*.internal.example"])
        #expect(fromEnvironment.allowedHosts == [])
    }

    @Test func aGidMayBeANumberOrAString() async throws {
        #expect(try await load(#"{"socket_group": 0}"#).socketGroup == "0")
        #expect(try await load(#"{"socket_group": "0"}"#).socketGroupID == 0)
        #expect(try await load("{}").socketGroupID == getegid(), "no group: the daemon's own")
        await #expect(throws: ConfigurationError.self) { try await load(#"{"socket_group": "4294967295"}"#) }
    }

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

    @Test func hostKeysAndTheSocketGroupApplyOnReload() {
        var new = DaemonConfiguration()
        new.deniedHosts = ["10.0.0.0/8"]
        new.allowedHosts = ["example.com"]
        new.localAddresses = "deny"
        new.socketGroup = "0"
        let applied = DaemonConfiguration().applyingLiveKeys(from: new)
        #expect(DaemonConfiguration.changedKeys(from: applied, to: new).isEmpty, "all four are live")
    }
}
