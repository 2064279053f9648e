import ArgumentParser
import TransferProtocol

/// `transferctl priority ID CLASS`: changes a job's priority class.
struct PriorityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "priority",
        abstract: "Change a job's priority class: foreground, normal or background.",
        discussion: """
            Queued jobs start by class, foreground first, then normal, then background; within a \
            class, in their queue order (see transferctl move). A running background job gives its \
            slot up, checkpointed, when a foreground or normal job waits for one, and continues \
            later from the same byte. Prints 'ID CLASS' (with --json, the job).
            """
    )

    @Argument(help: "The job's id.", completion: JobIDCompletion.kind(.unfinished))
    var id: String

    @Argument(help: "foreground, normal or background.", completion: .list(JobPriority.allCases.map(\.rawValue)))
    var priority: String

    @Flag(help: "Print the job as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if id.isEmpty { throw ValidationError("ID must not be empty") }
        if JobPriority(rawValue: priority) == nil { throw ValidationError("'\(priority)' is not a class: give \(JobPriority.choices)") }
    }

    func run() async throws {
        let client = try clientOptions.connect()
        let job = try client.call(PriorityMethod.self, .init(id: id, priority: priority)).job
        if json { try JSONOutput.print(job) } else { print("\(TerminalText.printable(job.id)) \((job.priority ?? .normal).rawValue)") }
    }
}
