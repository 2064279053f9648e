import Foundation
import Testing

/// The units in `systemd/` as systemd itself reads them. `ExecStart=` points at the binary built for
/// the tests, since `verify` checks that it exists.
@Suite("Unit files")
struct UnitFileTests {
    static let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let units = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../systemd").standardized.path

    @Test(.enabled(if: analyze != nil, "systemd-analyze is not installed (Debian: apt-get install systemd)"))
    func theSystemUnitsPassVerify() throws {
        let directory = try Self.copyUnits(["transferd.service", "transferd.socket"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try Self.analyze(["verify", "--man=no", directory + "/transferd.socket", directory + "/transferd.service"])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty, "\(result.output)")
    }

    @Test(.enabled(if: analyze != nil, "systemd-analyze is not installed (Debian: apt-get install systemd)"))
    func theUserUnitsPassVerify() throws {
        let directory = try Self.copyUnits(["user/transferd.service", "user/transferd.socket"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A user manager needs a runtime directory, even to read units.
        let runtime = directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let result = try Self.analyze(
            ["--user", "verify", "--man=no", directory + "/user/transferd.socket", directory + "/user/transferd.service"],
            environment: ["XDG_RUNTIME_DIR": runtime])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.isEmpty, "\(result.output)")
    }

    @Test(.enabled(if: analyze != nil, "systemd-analyze is not installed (Debian: apt-get install systemd)"))
    func theServiceIsRatedAtMostTwoBySystemdAnalyzeSecurity() throws {
        let result = try Self.analyze(["security", "--offline=true", "--no-pager", Self.units + "/transferd.service"])
        // "→ Overall exposure level for transferd.service: 1.2 OK 🙂"
        let line = try #require(result.output.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(result.output)")
        let figure = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(figure <= 2.0, "\(line)")
    }

    /// Copies `names` (paths under systemd/) into a new directory, with ExecStart= at the built binary.
    private static func copyUnits(_ names: [String]) throws -> String {
        let directory = "/tmp/td-units-\(UUID().uuidString.prefix(8))"
        for name in names {
            let text = try String(contentsOfFile: units + "/" + name, encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/transferd", with: Binaries.transferd)
            let target = directory + "/" + name
            try FileManager.default.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try text.write(toFile: target, atomically: true, encoding: .utf8)
        }
        return directory
    }

    private static func analyze(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: analyze ?? "systemd-analyze")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["SYSTEMD_COLORS"] = "0"
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
