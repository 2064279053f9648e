import ArgumentParser
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// `transferctl status [ID]`: one job in detail, or a table of the caller's jobs.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show one job, or list your jobs.",
        discussion: """
            Without an ID, prints a table of your newest \(Self.defaultRows) jobs (ID, STATE, \
            PROGRESS, SIZE, RATE, DESTINATION), oldest of them first, and a line saying how many \
            more match; --limit N shows the newest N, --all-jobs every one. The daemon filters and \
            pages the list, so it stays fast with a million jobs kept. With an ID, prints that job \
            field by field. --json prints the job for an ID, else one job per line (NDJSON).
            """
    )

    /// Said under the list while root's `pause --all` holds every transfer.
    static let holdLine = "transferd holds all transfers (pause --all): none starts until root runs transferctl resume --all"

    /// Rows of the table when neither --limit nor --all-jobs is given.
    static let defaultRows = 50

    @Argument(help: "A job's id. Without it, lists your jobs.", completion: JobIDCompletion.kind(.any))
    var id: String?

    @Option(
        name: .customLong("state"),
        help: ArgumentHelp(
            "List only jobs in this state: \(Self.stateNames). Repeat, or separate with commas, for several.",
            valueName: "state"),
        completion: .list(Self.stateChoices))
    var states: [String] = []

    @Option(help: ArgumentHelp("List only the jobs of this session.", valueName: "name"))
    var session: String?

    @Option(help: ArgumentHelp("List only the jobs of this user id (root only).", valueName: "uid"))
    var owner: UInt32?

    @Option(help: ArgumentHelp("List the newest N jobs (default \(Self.defaultRows)).", valueName: "N"))
    var limit: Int?

    @Flag(help: "List every matching job, not only the newest \(Self.defaultRows) (yours only, unless with --all-users).")
    var allJobs = false

    @Flag(
        name: [.customLong("all-users"), .customLong("all")],
        help: "List every user's jobs, not only yours (root only; --all is the same). --all-jobs lifts the row limit instead.")
    var all = false

    @Flag(help: "Print JSON: the job for an ID, else one job per line (NDJSON).")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    /// The states `--state` takes: the job states and `paused`, as the table shows them.
    static let stateChoices = JobState.allCases.map(\.rawValue) + ["paused"]

    private static let stateNames = stateChoices.joined(separator: ", ")

    func validate() throws {
        if let id, id.isEmpty { throw ValidationError("ID must not be empty") }
        if id != nil, all || allJobs || limit != nil || session != nil || owner != nil || !states.isEmpty {
            throw ValidationError("--state, --session, --owner, --limit, --all-jobs and --all-users filter the list of jobs; leave them out when giving an ID")
        }
        if allJobs, limit != nil { throw ValidationError("--limit and --all-jobs contradict each other: give one") }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        _ = try parsedStates()
    }

    /// The `--state` values, split at commas, in order and without repeats; `paused` (a flag of
    /// an unfinished job, shown as its state) comes apart.
    func parsedStates() throws(ValidationError) -> (states: [JobState], paused: Bool) {
        var result: [JobState] = []
        var paused = false
        for name in states.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            if name.lowercased() == "paused" {
                paused = true
                continue
            }
            guard let state = JobState(rawValue: name.lowercased()) else {
                throw ValidationError("'\(name)' is not a job state; use one of \(Self.stateNames)")
            }
            if !result.contains(state) { result.append(state) }
        }
        return (result, paused)
    }

    func run() async throws {
        let (states, paused) = try parsedStates()
        if all, getuid() != 0 {
            throw TransferCtlError.refused(RPCError(
                .notPermitted,
                "--all-users (--all) lists every user's jobs, which only root may; for every one of your own jobs, not only the newest \(Self.defaultRows), use --all-jobs"))
        }
        let client = try clientOptions.connect()
        guard let id else {
            try list(client, states: states, paused: paused)
            return
        }
        let answer = try client.call(TransferProtocol.Status.self, .init(id: id))
        let jobs = answer.jobs
        guard let job = jobs.first(where: { $0.isNamed(id) }) else {
            throw TransferCtlError.connectionBroken("transferd's status answer does not contain job \(id)")
        }
        if json { try JSONOutput.print(job) } else { print(JobDetail(job: job).render()) }
        if !json, answer.hold == true {
            StandardError.writeLine(Self.holdLine)
        }
    }

    /// Prints the list page by page: the newest `--limit` (or every job with --all-jobs), oldest first.
    private func list(_ client: ControlClient, states: [JobState], paused: Bool) throws {
        var query = TransferProtocol.Status.Params(
            states: states.isEmpty ? nil : states, all: all ? true : nil, session: session, owner: owner, newestFirst: !allJobs,
            paused: paused ? true : nil)
        var wanted = allJobs ? Int.max : (limit ?? Self.defaultRows)
        var shown: [Job] = []
        var total = 0
        var held = false
        while wanted > 0 {
            query.limit = min(wanted, TransferProtocol.Status.maxLimit)
            let page = try client.call(TransferProtocol.Status.self, query)
            total = page.total ?? total
            held = held || page.hold == true
            wanted -= page.jobs.count
            if allJobs, json {
                // Every job, oldest first, streamed: memory stays flat however many there are.
                for job in page.jobs { try JSONOutput.print(job) }
            } else {
                shown += page.jobs
            }
            guard let next = page.nextCursor, !page.jobs.isEmpty else { break }
            query.cursor = next
        }
        if held, !json { StandardError.writeLine(Self.holdLine) }
        if allJobs, json { return }
        // Pages newest first (but --all-jobs) hold the newest jobs; they print oldest first.
        if !allJobs { shown.reverse() }
        if json {
            for job in shown { try JSONOutput.print(job) }
            return
        }
        print(StatusTable(jobs: shown).render())
        if total > shown.count {
            StandardError.writeLine("\(total - shown.count) older jobs not shown (\(total) in all): --limit N shows more, --all-jobs every one")
        }
    }
}
