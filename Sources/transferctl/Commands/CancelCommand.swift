import ArgumentParser
import TransferProtocol

/// `transferctl cancel ID`: stops a queued or running job and removes its partial file.
struct CancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Stop a queued or running job and remove its partial file.",
        discussion: "Prints 'cancelled ID' (with --json, the job)."
    )

    @Argument(help: "The job's id.", completion: JobIDCompletion.kind(.unfinished))
    var id: String

    @Flag(help: "Print the cancelled job as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if id.isEmpty { throw ValidationError("ID must not be empty") }
    }

    func run() async throws {
        let client = try clientOptions.connect()
        let job = try client.call(TransferProtocol.Cancel.self, .init(id: id)).job
        if json { try JSONOutput.print(job) } else { print("cancelled \(job.id)") }
    }
}
