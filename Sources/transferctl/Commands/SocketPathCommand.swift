import ArgumentParser
import TransferProtocol

/// `transferctl socket-path`: the control socket transferctl would use, for scripts that speak
/// the protocol themselves (`socat`, Python), and why it is that one.
struct SocketPathCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "socket-path",
        abstract: "Print the control socket transferctl would use, and why.",
        discussion: """
            Prints the path on stdout: the one given with --socket, else $TRANSFERD_SOCKET, \
            else your own daemon's socket when a daemon listens there, else the system \
            daemon's when one listens there, else your own daemon's (where `transferd` would \
            listen). The reason goes to stderr when stdout is a terminal, or with --verbose. \
            Exits 0 when a daemon accepts connections on that path, 3 when none does (the \
            path is printed all the same). A script finds the daemon as transferctl does:

              S=$(transferctl socket-path) && printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"version"}' | socat - "UNIX-CONNECT:$S"
            """
    )

    /// What `socket-path --json` prints.
    struct Report: Codable {
        var path: String
        var source: SocketChoice.Source
        var reason: String
        var reachable: Bool
        var problem: String?
    }

    @Flag(name: [.short, .long], help: "Also say on stderr why this path, when stdout is not a terminal.")
    var verbose = false

    @Flag(help: "Print the path, where it came from (flag, environment, user, system), why and whether a daemon listens there, as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func run() async throws {
        let choice = SocketChoice.resolve(clientOptions)
        if json {
            try JSONOutput.print(Report(path: choice.path, source: choice.source, reason: choice.reason, reachable: choice.reachable, problem: choice.problem))
        } else {
            print(choice.path)
            if verbose || Terminal.isTerminal(1) {
                StandardError.writeLine("transferctl: \(choice.reason)")
            }
        }
        guard choice.reachable else {
            if !json {
                StandardError.writeLine("transferctl: no transferd accepts connections at \(choice.path): \(choice.problem ?? "")")
            }
            throw ExitCode.daemonUnreachable
        }
    }
}
