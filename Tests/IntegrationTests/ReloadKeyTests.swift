import Testing
import TransferCore
import TransferDaemon

/// What a reload applies and reports.
@Suite("Reload")
struct ReloadKeyTests {
    @Test func everyStoredPropertyIsAFileKey() {
        let properties = Mirror(reflecting: DaemonConfiguration()).children.compactMap(\.label)
        #expect(Set(properties.map(DaemonConfiguration.key(forProperty:))) == Set(DaemonConfiguration.keys))
    }

    @Test func changedKeysNameWhatDiffers() {
        var new = DaemonConfiguration()
        new.maxConcurrentTransfers = 9
        new.checkpointBytes = 1 << 20
        #expect(DaemonConfiguration.changedKeys(from: DaemonConfiguration(), to: new) == ["max_concurrent_transfers", "checkpoint_bytes"])
        let applied = DaemonConfiguration().applyingLiveKeys(from: new)
        #expect(applied.maxConcurrentTransfers == 9)
        #expect(DaemonConfiguration.changedKeys(from: applied, to: new) == ["checkpoint_bytes"], "engine settings wait for a restart")
    }

    @Test func allowedRootsApplyAtOnce() {
        var new = DaemonConfiguration()
        new.allowedRoots = AllowedRoots(["/data/downloads"])
        let applied = DaemonConfiguration().applyingLiveKeys(from: new)
        #expect(applied.allowedRoots.paths == ["/data/downloads"])
        #expect(DaemonConfiguration.changedKeys(from: DaemonConfiguration(), to: applied) == ["allowed_roots"])
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
