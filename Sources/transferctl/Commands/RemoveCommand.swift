import ArgumentParser
import TransferProtocol

/// `transferctl remove ID...`: forgets finished jobs.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Forget finished jobs: their records, partial files and unacknowledged events.",
        discussion: """
            Prints 'removed ID' for each job. A job whose session had not yet acknowledged its end \
            is removed all the same, and a note on stderr says that event is gone. A job that has \
            not ended is refused (cancel it first); the others are removed, and the exit status is \
            4. With --json, prints each removed job as one line of JSON.
            """
    )

    @Argument(help: "The ids of finished jobs.", completion: JobIDCompletion.kind(.finished))
    var ids: [String]

    @Flag(help: "Print each removed job as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws { try JobIDs.validate(ids) }

    func run() async throws {
        try JobIDs.call(TransferProtocol.Remove.self, ids, with: clientOptions) { id, removed in
            if json { try JSONOutput.print(removed.job) } else { print("removed \(removed.job.id)") }
            if removed.droppedEvent {
                StandardError.writeLine("note: the end of job \(id) had not been acknowledged by session \(removed.job.session ?? "?"); that event is gone too")
            }
        }
    }
}

/// Commands that act on several jobs by id, one call each in one batch.
enum JobIDs {
    static func validate(_ ids: [String]) throws {
        if ids.isEmpty { throw ValidationError("give the id of at least one job") }
        if ids.contains(where: \.isEmpty) { throw ValidationError("ID must not be empty") }
    }

    /// Calls `method` for each id in one batch and hands each answer to `report`; a refusal is
    /// printed on stderr with its id, and any refusal makes the exit status 4.
    static func call<M: RPCMethod>(
        _ method: M.Type, _ ids: [String], with options: ClientOptions, report: (String, M.Result) throws -> Void
    ) throws where M.Params: IDParams {
        let client = try options.connect()
        let results = try client.callBatch(method, ids.map { M.Params(id: $0) })
        var refused = false
        for (id, result) in zip(ids, results) {
            switch result {
            case .success(let answer): try report(id, answer)
            case .failure(let error):
                refused = true
                StandardError.writeLine("transferctl: \(id): \(error.message)")
            }
        }
        if refused { throw ExitCode.requestRefused }
    }
}

/// The params of a method that takes one job's id.
protocol IDParams { init(id: String) }
extension TransferProtocol.Remove.Params: IDParams {}
extension TransferProtocol.Retry.Params: IDParams {}

/// `transferctl clean`: forgets finished jobs in bulk.
struct CleanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clean",
        abstract: "Forget your finished jobs, or those in some states or older than some time.",
        discussion: """
            Without options, forgets every finished job of yours (completed, failed, cancelled). \
            Prints how many went, and says on stderr how many had an end their session had not yet \
            acknowledged. DURATION is a number with s, m, h or d (90s, 30m, 12h, 7d).
            """
    )

    @Option(
        name: .customLong("state"),
        help: ArgumentHelp("Only jobs that ended so: completed, failed or cancelled. Repeat, or separate with commas.", valueName: "state"),
        completion: .list(["completed", "failed", "cancelled"]))
    var states: [String] = []

    @Option(help: ArgumentHelp("Only jobs that ended at least this long ago (90s, 30m, 12h, 7d).", valueName: "duration"))
    var olderThan: String?

    @Flag(name: [.customLong("all-users"), .customLong("all")], help: "Every user's finished jobs, not only yours (root only; --all is the same).")
    var all = false

    @Flag(help: "Print the answer as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        _ = try parsedStates()
        if let olderThan, Self.seconds(olderThan) == nil {
            throw ValidationError("--older-than '\(olderThan)' is not a duration: give a number with s, m, h or d, such as 7d")
        }
    }

    func parsedStates() throws(ValidationError) -> [JobState] {
        var result: [JobState] = []
        for name in states.flatMap({ $0.split(separator: ",") }) {
            guard let state = JobState(rawValue: name.lowercased()), state.isTerminal else {
                throw ValidationError("'\(name)' is not the state of a finished job: use completed, failed or cancelled")
            }
            if !result.contains(state) { result.append(state) }
        }
        return result
    }

    /// Seconds in `90s`, `30m`, `12h`, `7d` (or a plain number of seconds).
    static func seconds(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        if let unit = text.last.flatMap({ units[$0] }), let value = Double(text.dropLast()), value >= 0, value.isFinite {
            return value * unit
        }
        return Double(text).flatMap { $0 >= 0 && $0.isFinite ? $0 : nil }
    }

    func run() async throws {
        let states = try parsedStates()
        let client = try clientOptions.connect()
        let result = try client.call(
            TransferProtocol.Clean.self,
            .init(states: states.isEmpty ? nil : states, olderThanSeconds: olderThan.flatMap(Self.seconds), all: all ? true : nil))
        if json { try JSONOutput.print(result) } else { print("removed \(result.removed) finished job\(result.removed == 1 ? "" : "s")") }
        if result.droppedEvents > 0 {
            StandardError.writeLine("note: \(result.droppedEvents) of them had an end their session had not acknowledged; those events are gone too")
        }
    }
}

/// `transferctl retry ID...`: queues failed or cancelled jobs again.
struct RetryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retry",
        abstract: "Queue failed or cancelled jobs again under their ids.",
        discussion: """
            A failed download continues from its partial file when the server's validator (ETag \
            or Last-Modified) still matches; its time limit counts from now. Prints 'queued ID' for \
            each job (with --json, the job); a job that cannot be retried is reported on stderr \
            and the exit status is 4.
            """
    )

    @Argument(help: "The ids of failed or cancelled jobs.", completion: JobIDCompletion.kind(.failedOrCancelled))
    var ids: [String]

    @Flag(help: "Print each job as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws { try JobIDs.validate(ids) }

    func run() async throws {
        try JobIDs.call(TransferProtocol.Retry.self, ids, with: clientOptions) { _, retried in
            if json { try JSONOutput.print(retried.job) } else { print("queued \(retried.job.id)") }
        }
    }
}
