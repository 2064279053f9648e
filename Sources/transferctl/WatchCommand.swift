import ArgumentParser
import TransferProtocol

/// `transferctl watch`: a live view of jobs as they change.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Show your jobs live as they run and end.",
        discussion: """
            On a terminal, a progress line per unfinished job, redrawn as events arrive, and a \
            line for each job that ends. Otherwise one line per state change. With --json, every \
            event as one line of JSON (NDJSON), for `| jq`. Runs until interrupted.
            """
    )

    @Option(help: ArgumentHelp("Only jobs submitted under this session.", valueName: "name"))
    var session: String?

    @Flag(help: "Every user's jobs, not only yours (root only).")
    var all = false

    @Flag(help: "Print every event as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if let session { try SessionName.validate(session) }
        if all, session != nil { throw ValidationError("--all follows every user's jobs; a session is one user's: give one or the other") }
    }

    func run() async throws {
        let client = try clientOptions.connect(timeout: nil)
        _ = try client.call(Subscribe.self, .init(session: session, all: all ? true : nil))
        var reporter = ProgressReporter(interactive: !json && Terminal.isTerminal(1), output: .standardOutput)
        if !json {
            // The jobs already under way, so the view does not start empty; events follow.
            let active = try client.call(TransferProtocol.Status.self, .init(states: [.queued, .running, .waiting], all: all ? true : nil)).jobs
            for job in active where session == nil || job.session == session {
                reporter.update(job)
            }
        }
        do {
            while true {
                guard case .event(let event) = try client.nextStreamItem() else { continue }
                if json {
                    StandardOutput.write(String(decoding: try JSONOutput.encode(event), as: UTF8.self) + "\n")
                } else {
                    reporter.report(event)
                }
            }
        } catch {
            reporter.abandon()
            throw error
        }
    }
}
