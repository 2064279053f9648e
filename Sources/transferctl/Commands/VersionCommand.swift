import ArgumentParser
import TransferProtocol

/// `transferctl version`: this client's version, and the daemon's with its protocol version.
struct VersionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Show the versions of transferctl and of the running transferd.",
        discussion: """
            The client's version is printed even when transferd cannot be reached (then \
            exit 3).
            """
    )

    /// What `version --json` prints; the daemon's fields are absent when it was not reached.
    struct Report: Codable {
        var client: String
        var clientProtocol: Int
        var daemon: String?
        var `protocol`: Int?
    }

    @Flag(help: "Print the versions as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func run() async throws {
        var report = Report(client: transferdVersion, clientProtocol: transferProtocolVersion)
        let daemon: TransferProtocol.Version.Result
        do {
            let client = try clientOptions.connect()
            daemon = try client.call(TransferProtocol.Version.self, .init())
        } catch {
            try emit(report)
            throw error
        }
        report.daemon = daemon.daemon
        report.protocol = daemon.protocol
        try emit(report)
        if daemon.protocol != transferProtocolVersion {
            StandardError.writeLine(
                "transferctl: warning: transferd speaks protocol \(daemon.protocol), "
                    + "this transferctl speaks protocol \(transferProtocolVersion)")
        }
    }

    private func emit(_ report: Report) throws {
        if json {
            try JSONOutput.print(report)
            return
        }
        print("transferctl \(report.client)")
        if let daemon = report.daemon, let version = report.protocol {
            print("transferd \(TerminalText.printable(daemon)) (protocol \(version))")
        }
    }
}
