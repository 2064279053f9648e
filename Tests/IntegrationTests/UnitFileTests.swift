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

    /// The exposure systemd-analyze gives, and every check that counts against it: each is what the
    /// daemon needs (README, "Hardening"). Re-admitting setpriority, which libdispatch calls for its
    /// worker threads, is rated as "@resources included" (0.2), which takes 1.2 to 1.4.
    static let expectedExposures: Set<String> = [
        "SystemCallFilter=~@resources", "RootDirectory=/RootImage=", "RestrictAddressFamilies=~AF_UNIX",
        "RestrictAddressFamilies=~AF_(INET|INET6)", "PrivateNetwork=", "PrivateUsers=", "DeviceAllow=", "IPAddressDeny=", "UMask=",
    ]

    @Test(.enabled(if: analyze != nil, "systemd-analyze is not installed (Debian: apt-get install systemd)"))
    func theServiceIsRatedAtMostOnePointFourBySystemdAnalyzeSecurityAndNothingElseIsOpen() throws {
        let result = try Self.analyze(["security", "--offline=true", "--no-pager", Self.units + "/transferd.service"])
        // "→ Overall exposure level for transferd.service: 1.4 OK 🙂"
        let line = try #require(result.output.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(result.output)")
        let figure = try #require(line.split(separator: ":").last?.split(separator: " ").first.flatMap { Double($0) }, "\(line)")
        #expect(figure <= 1.4, "\(line)")
        // "✗ UMask=      Files created by service are group-readable by default      0.1"
        let open = Set(result.output.split(separator: "\n").filter { $0.hasPrefix("✗") }.compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) })
        #expect(open == Self.expectedExposures, "\(result.output)")
    }

    @Test func theSystemServiceReloadsThroughItsSocketAndDoesNotWaitForTheNetwork() throws {
        let service = try String(contentsOfFile: Self.units + "/transferd.service", encoding: .utf8)
        #expect(service.contains("ExecReload=/usr/local/bin/transferctl --socket /run/transferd/transferd.sock reload"))
        let dependencies = service.split(separator: "\n").filter { $0.hasPrefix("After=") || $0.hasPrefix("Wants=") || $0.hasPrefix("Requires=") }
        #expect(!dependencies.contains { $0.contains("network-online.target") }, "\(dependencies)")
        #expect(!service.contains("file://"))
        #expect(service.contains("Documentation=man:transferd(8)"))
        // setpriority comes back after @resources is taken out, and nothing else does.
        let filters = service.split(separator: "\n").filter { $0.hasPrefix("SystemCallFilter=") }
        #expect(filters == ["SystemCallFilter=@system-service", "SystemCallFilter=~@privileged @resources", "SystemCallFilter=setpriority"])
        let tmpfiles = try String(contentsOfFile: Self.units + "/transferd.tmpfiles", encoding: .utf8)
        #expect(tmpfiles.contains("d /srv/transferd 3775 transferd transferd -"), "sticky: members cannot remove each other's files")
    }

    /// Copies `names` (paths under systemd/) into a new directory, with ExecStart= at the built binary.
    private static func copyUnits(_ names: [String]) throws -> String {
        let directory = "/tmp/td-units-\(UUID().uuidString.prefix(8))"
        for name in names {
            let text = try String(contentsOfFile: units + "/" + name, encoding: .utf8)
                .replacingOccurrences(of: "/usr/local/bin/transferd ", with: Binaries.transferd + " ")
                .replacingOccurrences(of: "/usr/local/bin/transferd\n", with: Binaries.transferd + "\n")
                .replacingOccurrences(of: "/usr/local/bin/transferctl", with: Binaries.transferctl)
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
