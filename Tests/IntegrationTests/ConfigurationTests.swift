import Foundation
import Testing

@Suite("Configuration")
struct ConfigurationTests {
    /// Starts transferd with `configuration` and returns its exit status and stderr.
    private func startFailing(with configuration: String) throws -> (Int32, String) {
        let directory = "/tmp/td-config-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: directory + "/transferd.json"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.transferd)
        process.arguments = ["--socket", directory + "/s.sock", "--state-dir", directory + "/state", "--config", directory + "/transferd.json"]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, message)
    }

    @Test(arguments: [
        (#"{"max_concurrent_transfers": 0}"#, "max_concurrent_transfers"),
        (#"{"max_concurrent_transfers": "four"}"#, "max_concurrent_transfers"),
        (#"{"max_concurent_transfers": 4}"#, "unknown key 'max_concurent_transfers' in"),
        (#"{"max_concurent_transfers": 4}"#, "did you mean 'max_concurrent_transfers'?"),
        (#"{"socket_mode": "0777"}"#, "socket_mode"),
        (#"{"log_level": "loud"}"#, "log_level"),
        (#"{"socket_group": "no-such-group-here"}"#, "socket_group"),
        (#"{"allowed_hosts": ["example.com", "http://example.org/"]}"#, "allowed_hosts"),
        (#"{"denied_hosts": "10.0.0.0/8"}"#, "denied_hosts"),
        (#"{"denied_hosts": ["10.0.0.0/33"]}"#, "denied_hosts"),
        (#"{"local_addresses": "sometimes"}"#, "local_addresses"),
        (#"[1, 2]"#, "transferd.json"),
        (#"{"subscriber_queue_events": 0}"#, "subscriber_queue_events"),
        (#"{"hooks": [{"session": "s", "command": ["/bin/true"]}]}"#, "must be an object of named hooks"),
        (#"{"hooks": {"h": {"session": "s", "command": ["true"]}}}"#, "absolute path"),
        (#"{"hooks": {"h": {"session": "s", "command": ["/nonexistent/hook"]}}}"#, "/nonexistent/hook is not an executable file"),
        (#"{"hooks": {"h": {"session": "s", "command": ["/bin/true"], "on": ["running"]}}}"#, "use completed, failed or cancelled"),
        (#"{"hooks": {"h": {"session": "s", "command": ["/bin/true"], "shell": "x"}}}"#, "unknown field 'shell'"),
        (#"{"allowed_roots": "/srv/transferd"}"#, "allowed_roots"),
        (#"{"allowed_roots": []}"#, "allowed_roots"),
        (#"{"allowed_roots": ["srv/transferd"]}"#, "allowed_roots"),
        (#"{"allowed_roots": ["/srv/../etc"]}"#, "allowed_roots"),
        (#"{"allowed_roots": ["/srv/transferd", 3]}"#, "allowed_roots"),
    ])
    func anInvalidFileStopsStartUpNamingTheKey(configuration: String, named: String) throws {
        let (status, message) = try startFailing(with: configuration)
        #expect(status != 0)
        #expect(message.contains(named), "\(message)")
    }

    @Test func theShippedConfigurationFileIsValid() async throws {
        let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/transferd.json").standardized
        let contents = try String(contentsOf: shipped, encoding: .utf8)
        let object = try JSONSerialization.jsonObject(with: Data(contents.utf8)) as? [String: Any]
        let daemon = try TestDaemon(configuration: try #require(object))
        defer { daemon.cleanUp() }
        try await daemon.start()
        #expect(daemon.terminate() == 0)
    }
}
