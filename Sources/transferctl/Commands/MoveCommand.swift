import ArgumentParser
import TransferProtocol

/// `transferctl move ID --first | --before ID2`: changes a job's place in its class's queue.
struct MoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "move",
        abstract: "Change where a job stands in the queue of its priority class.",
        discussion: """
            Jobs of a class start in their queue order, which is submission order until a job is \
            moved. --first puts the job ahead of your other jobs of its class (root's: ahead of \
            everyone's); --before ID2 just ahead of job ID2, which must be of the same class \
            (change one's class with transferctl priority). Prints 'moved ID' (with --json, the job).
            """
    )

    @Argument(help: "The job's id.", completion: JobIDCompletion.kind(.unfinished))
    var id: String

    @Flag(help: "Ahead of the other jobs of its class.")
    var first = false

    @Option(help: ArgumentHelp("Just ahead of this job.", valueName: "id"))
    var before: String?

    @Flag(help: "Print the job as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if id.isEmpty { throw ValidationError("ID must not be empty") }
        if first == (before != nil) { throw ValidationError("say where: give --first or --before ID2, one of them") }
        if let before, before.isEmpty { throw ValidationError("--before needs a job id") }
    }

    func run() async throws {
        let client = try clientOptions.connect()
        let job = try client.call(Move.self, .init(id: id, first: first ? true : nil, before: before)).job
        if json { try JSONOutput.print(job) } else { print("moved \(TerminalText.printable(job.id))") }
    }
}
