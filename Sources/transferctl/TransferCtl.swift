import ArgumentParser
import TransferProtocol

/// `transferctl`: the command-line client of the transferd download daemon.
///
/// Its own `main()` maps every failure to the documented exit codes: usage errors exit 2
/// (not ArgumentParser's 64), while `--help` still exits 0.
@main
struct TransferCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transferctl",
        abstract: "Submit, watch and cancel downloads run by the transferd daemon.",
        discussion: """
            transferctl talks to transferd over its control socket: the path given with \
            --socket, else $TRANSFERD_SOCKET, else your own daemon's socket \
            ($XDG_RUNTIME_DIR/transferd/transferd.sock), then the system daemon's \
            (\(DefaultPaths.systemSocket)).

            Exit codes: 0 success; 1 a job failed or was cancelled (submit --wait, wait), or \
            events printed a failed job; \
            2 usage error; 3 transferd cannot be reached or the connection broke; \
            4 transferd refused the request.
            """,
        version: "transferctl \(transferdVersion) (protocol \(transferProtocolVersion))",
        subcommands: [
            SubmitCommand.self, UploadCommand.self, StatusCommand.self, CancelCommand.self, PauseCommand.self, ResumeCommand.self,
            PriorityCommand.self, MoveCommand.self,
            RemoveCommand.self, CleanCommand.self, LogCommand.self,
            RetryCommand.self, WaitCommand.self, WatchCommand.self, EventsCommand.self,
            ReloadCommand.self, VersionCommand.self, MetricsCommand.self, SocketPathCommand.self,
        ]
    )

    /// Without a subcommand there is nothing to do: show the help as a usage error.
    func run() async throws {
        StandardError.writeLine(Self.helpMessage())
        throw TransferCtlError.usage("transferctl: missing a command (submit, status, cancel, wait, watch, events, reload, version or metrics)")
    }

    static func main() async {
        var command: any ParsableCommand
        let arguments = LeadingSocketOption.reorder(Array(CommandLine.arguments.dropFirst()))
        if let message = UnknownCommand.message(for: arguments, commands: UnknownCommand.commandNames) {
            StandardError.writeLine(message)
            exit(withError: ExitCode.usageError)
        }
        do {
            command = try parseAsRoot(arguments)
        } catch {
            exitAfterParsing(error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exitAfterRunning(error)
        }
    }

    /// Help and similar clean exits go through ArgumentParser (exit 0); every other parse
    /// or validation error prints its message and usage on stderr and exits 2.
    private static func exitAfterParsing(_ error: any Error) -> Never {
        if exitCode(for: error) == .success {
            exit(withError: error)
        }
        StandardError.writeLine(usageMessage(for: error))
        exit(withError: ExitCode.usageError)
    }

    /// Maps a failure of a command's `run()` to its message on stderr and its exit code.
    private static func exitAfterRunning(_ error: any Error) -> Never {
        let failure: TransferCtlError
        switch error {
        case let error as TransferCtlError:
            failure = error
        case let error as ControlClientError:
            failure = TransferCtlError(error)
        case is ExitCode, is CleanExit:
            exit(withError: error)
        default:
            // ArgumentParser's own requests (`--help` is parsed into a command whose run()
            // throws) exit 0; its usage errors exit 2; anything else is unexpected.
            switch exitCode(for: error) {
            case .success:
                exit(withError: error)
            case .validationFailure:
                StandardError.writeLine(usageMessage(for: error))
                exit(withError: ExitCode.usageError)
            default:
                StandardError.writeLine("transferctl: \(error)")
                exit(withError: ExitCode.failure)
            }
        }
        if let message = failure.message {
            StandardError.writeLine(message)
        }
        exit(withError: failure.exitCode)
    }

    /// ArgumentParser's message and usage for a usage error, with transferctl's one prefix
    /// (`transferctl:`) in place of its `Error:`, as every other diagnostic has.
    static func usageMessage(for error: any Error) -> String {
        let full = fullMessage(for: error)
        guard full.hasPrefix("Error: ") else { return full }
        let rest = full.dropFirst("Error: ".count)
        return "transferctl: " + (rest.hasPrefix("transferctl: ") ? rest.dropFirst("transferctl: ".count) : rest)
    }
}
