import ArgumentParser
import TransferProtocol

/// `transferctl events --session NAME [--ack]`: what a session missed, for scripts run from cron.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print the ends of a session's jobs that it has not acknowledged.",
        discussion: """
            Prints, oldest first, one line per job of the session that completed, failed or was \
            cancelled since the session last acknowledged: SEQ, EVENT, ID, DESTINATION, and the \
            error of a failed job. With --ack, acknowledges them afterwards, so the next call \
            prints only newer ones. With --json, every event as one line of JSON. Exits 1 when \
            it printed a failed job (after acknowledging, with --ack), 0 otherwise.
            """
    )

    @Option(help: ArgumentHelp("The session, as given to submit --session.", valueName: "name"))
    var session: String

    @Flag(help: "Acknowledge the printed events: they are not printed again.")
    var ack = false

    @Flag(help: "Print every event as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        try SessionName.validate(session)
    }

    func run() async throws {
        let client = try clientOptions.connect()
        _ = try client.call(Subscribe.self, .init(session: session))
        var last: UInt64?
        var printedFailure = false
        // Only what was missed: the replay ends with caughtUp; live events after it are left for next time.
        while case .event(let event) = try client.nextStreamItem() {
            guard event.type.isTerminal else { continue }
            if json {
                StandardOutput.write(String(decoding: try JSONOutput.encode(event), as: UTF8.self) + "\n")
            } else {
                StandardOutput.write(Self.line(event) + "\n")
            }
            last = max(last ?? 0, event.seq)
            if event.type == .failed { printedFailure = true }
        }
        if ack, let last {
            let acknowledged = try client.call(Ack.self, .init(session: session, seq: last)).acknowledged
            StandardError.writeLine("transferctl: acknowledged \(acknowledged) event\(acknowledged == 1 ? "" : "s") of session \(session) (through \(last))")
        }
        // A script run from cron learns from the exit status alone that something needs a look.
        if printedFailure { throw TransferCtlError.jobUnsuccessful }
    }

    /// `42 completed 4f3c9a0d1e2b7a6 /srv/a.iso`, with `: the error` after a failed job.
    static func line(_ event: JobEvent) -> String {
        var text = "\(event.seq) \(event.type.rawValue) \(TerminalText.printable(event.job.id)) \(TerminalText.printable(event.job.target))"
        if event.type == .failed, let error = event.job.error {
            text += ": " + TerminalText.printable(error.message)
        }
        return text
    }
}
