import ArgumentParser
import TransferProtocol

/// `transferctl wait ID...`: follows jobs until they end.
struct WaitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wait",
        abstract: "Wait until jobs end, showing their progress.",
        discussion: """
            On a terminal, shows a progress line per job (bytes, percent, rate, ETA) on stderr; \
            otherwise one line per state change. Exits 0 when every job completed, 1 when any \
            failed or was cancelled. With --json, prints each job's final state as one line of \
            JSON on stdout.

            When transferd restarts meanwhile (a crash, kill -9, systemctl restart), wait \
            connects again and continues from the last event it saw, saying so on stderr; it \
            gives up (exit 3) when no daemon answers for 10 minutes.
            """
    )

    @Argument(help: "The ids of the jobs to wait for.", completion: JobIDCompletion.kind(.unfinished))
    var ids: [String]

    @Flag(help: "Print each job's final state as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if ids.isEmpty { throw ValidationError("give the id of at least one job") }
        if ids.contains(where: \.isEmpty) { throw ValidationError("a job id must not be empty") }
    }

    func run() async throws {
        let client = try clientOptions.connect(timeout: nil)
        let jobs = try JobWaiter(client: client, options: clientOptions).wait(for: ids)
        if json {
            for job in jobs { try JSONOutput.print(job) }
        }
        if jobs.contains(where: { $0.state != .completed }) {
            throw TransferCtlError.jobUnsuccessful
        }
    }
}
