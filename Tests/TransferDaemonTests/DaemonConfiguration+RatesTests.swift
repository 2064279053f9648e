import Foundation
import Testing
import TransferCore
import TransferDaemon
#if canImport(Glibc)
import Glibc
#endif

/// Rate limits in the configuration: curl's spelling or a number, and the windows of the week.
@Suite("Daemon configuration: rates")
struct DaemonConfigurationRatesTests {
    private func load(_ json: String, environment: [String: String] = [:]) async throws -> DaemonConfiguration {
        let path = "/tmp/td-rateconfig-\(UUID().uuidString.prefix(8)).json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        return try await DaemonConfiguration.load(path: path, environment: environment).0
    }

    @Test func ratesAreStringsWithSuffixesOrNumbers() async throws {
        #expect(try await load(#"{"max_rate": "4M"}"#).maxRate == 4 << 20)
        #expect(try await load(#"{"max_rate": 1048576, "background_max_rate": "512K"}"#).backgroundMaxRate == 512 << 10)
        #expect(try await load(#"{"max_rate": "0"}"#).maxRate == nil)
        #expect(try await load("{}", environment: ["TRANSFERD_MAX_RATE": "2M"]).maxRate == 2 << 20)
        await #expect(throws: ConfigurationError.self) { try await load(#"{"max_rate": "4X"}"#) }
    }

    @Test func windowsNameDaysAndTimes() async throws {
        let config = try await load(
            #"{"rate_windows": {"office": {"days": "mon-fri", "from": "08:00", "to": "18:00", "max_rate": "5M"}, "nights": {"days": "sat,sun", "from": "22:00", "to": "06:00", "max_rate": 0}}}"#)
        #expect(config.rateWindows == [
            RateWindow(name: "nights", days: [7, 1], from: 1320, to: 360, maxRate: nil),
            RateWindow(name: "office", days: Set(2...6), from: 480, to: 1080, maxRate: 5 << 20),
        ].sorted { $0.name < $1.name })
        #expect(try await load(#"{"rate_windows": {"all": {"from": "00:00", "to": "24:00", "max_rate": "1M"}}}"#).rateWindows.first?.days == Set(1...7))
        for bad in [
            #"{"w": {"days": "mon-xyz", "from": "08:00", "to": "18:00", "max_rate": "5M"}}"#, #"{"w": {"from": "8", "to": "18:00", "max_rate": "5M"}}"#,
            #"{"w": {"from": "08:00", "to": "18:00"}}"#, #"{"w": {"from": "08:00", "to": "18:00", "max_rate": "5M", "rate": 1}}"#, #"["x"]"#,
        ] {
            await #expect(throws: ConfigurationError.self) { try await load(#"{"rate_windows": "# + bad + "}") }
        }
    }
}
