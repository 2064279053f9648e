import ArgumentParser
import TransferProtocol

/// `transferctl status [ID]`: one job in detail, or a table of the caller's jobs.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show one job, or list your jobs.",
        discussion: """
            Without an ID, prints a table of your jobs (ID, STATE, PROGRESS, SIZE, RATE, \
            DESTINATION); with an ID, that job field by field. --json prints the job, or an \
            array of jobs, as one line of JSON.
            """
    )

    @Argument(help: "A job's id. Without it, lists your jobs.")
    var id: String?

    @Option(
        name: .customLong("state"),
        help: ArgumentHelp(
            "List only jobs in this state: \(Self.stateNames). Repeat, or separate with commas, for several.",
            valueName: "state"),
        completion: .list(JobState.allCases.map(\.rawValue)))
    var states: [String] = []

    @Flag(help: "List every user's jobs, not only yours (root only).")
    var all = false

    @Flag(help: "Print JSON: the job for an ID, else an array of jobs.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    private static let stateNames = JobState.allCases.map(\.rawValue).joined(separator: ", ")

    func validate() throws {
        if let id, id.isEmpty { throw ValidationError("ID must not be empty") }
        if id != nil, all { throw ValidationError("--all lists jobs; leave it out when giving an ID") }
        if id != nil, !states.isEmpty {
            throw ValidationError("--state filters the list of jobs; leave it out when giving an ID")
        }
        _ = try parsedStates()
    }

    /// The `--state` values, split at commas, in order and without repeats.
    func parsedStates() throws(ValidationError) -> [JobState] {
        var result: [JobState] = []
        for name in states.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            guard let state = JobState(rawValue: name.lowercased()) else {
                throw ValidationError("'\(name)' is not a job state; use one of \(Self.stateNames)")
            }
            if !result.contains(state) { result.append(state) }
        }
        return result
    }

    func run() async throws {
        let states = try parsedStates()
        let client = try clientOptions.connect()
        let jobs = try client.call(
            TransferProtocol.Status.self, .init(id: id, states: states.isEmpty ? nil : states, all: all ? true : nil)
        ).jobs
        guard let id else {
            if json { try JSONOutput.print(jobs) } else { print(JobTable(jobs: jobs).render()) }
            return
        }
        guard let job = jobs.first(where: { $0.id == id }) else {
            throw TransferCtlError.connectionBroken("transferd's status answer does not contain job \(id)")
        }
        if json { try JSONOutput.print(job) } else { print(JobDetail(job: job).render()) }
    }
}
