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

            When transferd restarts meanwhile, watch connects again and continues from the last \
            event it saw: each job that changed meanwhile is shown once, as it is now, and no \
            event twice. It says so on stderr, and gives up (exit 3) when no daemon answers for \
            10 minutes.
            """
    )

    @Option(help: ArgumentHelp("Only jobs submitted under this session.", valueName: "name"))
    var session: String?

    @Flag(name: [.customLong("all-users"), .customLong("all")], help: "Every user's jobs, not only yours (root only; --all is the same).")
    var all = false

    @Flag(help: "Print every event as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if let session { try SessionName.validate(session) }
        if all, session != nil { throw ValidationError("--all-users follows every user's jobs; a session is one user's: give one or the other") }
    }

    func run() async throws {
        let options = clientOptions
        let client = try options.connect(timeout: nil)
        var first: ControlClient? = client
        let subscription = try ResumingSubscription(params: .init(session: session, all: all ? true : nil)) { () throws(TransferCtlError) -> ControlClient in
            if let given = first {
                first = nil
                return given
            }
            return try options.connect(timeout: nil)
        }
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
                let event: JobEvent
                switch try subscription.next() {
                case .notice(let line):
                    reporter.notice(line)
                    continue
                case .event(let next):
                    event = next
                }
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
