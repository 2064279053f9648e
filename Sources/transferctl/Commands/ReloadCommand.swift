import ArgumentParser
import TransferProtocol

/// `transferctl reload`: has transferd re-read its configuration and waits for the outcome.
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Have transferd re-read its configuration, and wait until it has.",
        discussion: """
            Exits 0 once the new configuration is in effect, and 4 when it is invalid (transferd \
            names the key and keeps the configuration it had). Root and the daemon's own user \
            only. transferd.service runs it as its ExecReload=, so `systemctl reload transferd` \
            fails when the file is invalid.
            """
    )

    @Flag(help: "Print transferd's answer as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func run() async throws {
        let client = try clientOptions.connect()
        let result = try client.call(Reload.self, .init())
        if json {
            try JSONOutput.print(result)
            return
        }
        var line = "transferd reloaded \(result.config.map { TerminalText.printable($0) } ?? "its configuration (no configuration file: the defaults, the environment and its flags)")"
        line += result.applied.isEmpty ? ": nothing changed" : ": applied \(result.applied.joined(separator: ", "))"
        StandardError.writeLine("transferctl: " + line)
        if !result.pending.isEmpty {
            StandardError.writeLine("transferctl: restart transferd to apply \(result.pending.joined(separator: ", "))")
        }
    }
}
