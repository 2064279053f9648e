import Foundation
import Testing
@testable import TransferDaemon

/// config/README.md documents every configuration key, and config/transferd.json shows each one
/// that has a plain value.
@Suite("Configuration documentation")
struct ConfigurationDocsTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func everyKeyHasARowInTheConfigurationReadme() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("config/README.md"), encoding: .utf8)
        let missing = DaemonConfiguration.keys.filter { !readme.contains("| `\($0)` |") }
        #expect(missing.isEmpty, "config/README.md has no row for \(missing)")
    }
}

/// config/transferd.json holds every key the daemon reads, at its default, but the few whose
/// default is no value to write (none, or one that depends on who runs the daemon).
@Suite("The shipped configuration file")
struct ShippedConfigurationTests {
    /// Keys left out of config/transferd.json, each for a reason config/README.md gives.
    static let withoutPlainDefault: Set<String> = [
        "allowed_roots",  // the system service's or your home and /tmp: depends on who runs it
        "hooks", "rate_windows", "client_certificates",  // none by default
    ]

    @Test func everyKeyTheDaemonReadsIsInTheShippedFile() throws {
        let data = try Data(contentsOf: ConfigurationDocsTests.repository.appendingPathComponent("config/transferd.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let shipped = Set(object.keys)
        let missing = Set(DaemonConfiguration.keys).subtracting(shipped).subtracting(Self.withoutPlainDefault)
        #expect(missing.isEmpty, "config/transferd.json lacks \(missing.sorted())")
        #expect(shipped.subtracting(DaemonConfiguration.keys).isEmpty, "config/transferd.json holds unknown keys")
    }
}
