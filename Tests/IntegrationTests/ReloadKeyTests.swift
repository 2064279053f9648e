import Testing
@testable import transferd

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
}
