import Foundation
import Testing
import TransferDaemon
#if canImport(Glibc)
import Glibc
#endif

/// How the file and the environment are read, and the defaults that depend on the daemon's role.
@Suite("Daemon configuration")
struct DaemonConfigurationTests {
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

    @Test func theDefaultRootsDependOnWhoRunsTheDaemon() {
        let user = ["HOME": "/home/alice"]
        #expect(DaemonConfiguration.defaultAllowedRoots(role: .systemService, environment: user) == ["/srv/transferd"])
        #expect(DaemonConfiguration.defaultAllowedRoots(role: .user, environment: user) == ["/home/alice", "/tmp"])
        // Root started by hand is its own user: its home and /tmp.
        #expect(DaemonConfiguration.defaultAllowedRoots(role: .user, environment: ["HOME": "/root"]) == ["/root", "/tmp"])
        #expect(DaemonConfiguration.defaultAllowedRoots(role: .user, environment: ["HOME": "/"]) == ["/tmp"])
    }
}
