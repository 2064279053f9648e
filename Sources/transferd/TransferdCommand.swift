import ArgumentParser
import Logging
import TransferDaemon
import TransferProtocol

/// `transferd`: the daemon. Runs in the foreground and logs to stderr.
@main
struct TransferdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transferd",
        abstract: "Finish every accepted download, across client exits, restarts, crashes and network drops.",
        discussion: """
            Listens for JSON-RPC requests on a Unix socket (see docs/protocol.md), keeps every \
            accepted job in a journal in the state directory, and logs to stderr.
            """,
        version: transferdVersion)

    @Flag(help: ArgumentHelp(
        "Run as the system service (transferd.service passes it).",
        discussion: "Its defaults: socket /run/transferd/transferd.sock, state /var/lib/transferd, configuration /etc/transferd/transferd.json, allowed_roots /srv/transferd, loopback addresses refused. Without it, a daemon started by hand, root's included, is its user's own."))
    var system = false

    @Option(help: "The control socket. Default: $TRANSFERD_SOCKET, else $RUNTIME_DIRECTORY/transferd.sock, else $XDG_RUNTIME_DIR/transferd/transferd.sock (/run/user/UID/… without it), or /run/transferd/transferd.sock with --system. Not used when systemd passes the socket (LISTEN_FDS).")
    var socket: String?

    @Option(name: .customLong("state-dir"), help: "Where the journal lives. Default: $TRANSFERD_STATE_DIR, else $STATE_DIRECTORY, else $XDG_STATE_HOME/transferd (~/.local/state/transferd), or /var/lib/transferd with --system.")
    var stateDirectory: String?

    @Option(help: "The JSON configuration file. Default: $TRANSFERD_CONFIG, else, when it exists, $XDG_CONFIG_HOME/transferd/transferd.json (~/.config/transferd/transferd.json), or /etc/transferd/transferd.json with --system.")
    var config: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical (overrides log_level).")
    var logLevel: String?

    @Option(name: .customLong("max-concurrent-transfers"), help: "Transfers that run at once (overrides max_concurrent_transfers).")
    var maxConcurrentTransfers: Int?

    func validate() throws {
        if let logLevel, Logger.Level(rawValue: logLevel) == nil {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical")
        }
    }

    func run() async throws {
        try await Daemon.run(
            DaemonOptions(
                system: system, socket: socket, stateDirectory: stateDirectory, config: config, logLevel: logLevel,
                maxConcurrentTransfers: maxConcurrentTransfers))
    }
}
