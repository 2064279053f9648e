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

    /// transferd.json(5) is made from config/README.md by man/config-to-roff.py; each key is an
    /// entry of its KEYS section.
    @Test func everyKeyHasAnEntryInTheConfigurationManPage() throws {
        let page = try Self.configurationManPage()
        #expect(page.hasPrefix(".\\\" transferd.json(5)"), "\(page.prefix(200))")
        let keys = page.components(separatedBy: "\n.SH ").first { $0.hasPrefix("KEYS\n") } ?? ""
        let missing = DaemonConfiguration.keys.filter { !keys.contains(".TP\n\\fB\\%\($0)\\fR\n") }
        #expect(missing.isEmpty, "transferd.json(5) has no entry for \(missing)")
        for section in ["NAME", "SYNOPSIS", "DESCRIPTION", "KEYS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"] {
            #expect(page.contains("\n.SH \(section)\n"), "transferd.json(5) lacks its \(section) section")
        }
    }

    /// The page as `make man` writes it.
    static func configurationManPage() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            repository.appendingPathComponent("man/config-to-roff.py").path, repository.appendingPathComponent("config/README.md").path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self)
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
