import Testing
import TransferCore
import TransferDaemon
import TransferProtocol

/// What a reload applies and reports.
@Suite("Daemon configuration: reload")
struct DaemonConfigurationReloadTests {
    @Test func everyStoredPropertyIsAFileKey() {
        let properties = Mirror(reflecting: DaemonConfiguration()).children.compactMap(\.label)
        #expect(Set(properties.map(\.snakeCased)) == Set(DaemonConfiguration.keys))
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
