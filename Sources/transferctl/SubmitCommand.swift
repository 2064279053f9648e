import ArgumentParser
import TransferProtocol

/// `transferctl submit URL DEST`: hands a download to transferd and prints the job's id.
struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue a download of URL into the file DEST.",
        discussion: """
            Prints the job's id (with --json, the job). With --wait, shows progress on stderr \
            until the job ends, then prints the id and exits 0 if it completed, 1 if it failed \
            or was cancelled.
            """
    )

    @Argument(help: "The http or https URL to download.")
    var url: String

    @Argument(help: ArgumentHelp("The file to create; a relative path is taken from the current directory.", valueName: "dest"))
    var destination: String

    @Option(help: ArgumentHelp(
        "Your own id for the job; submitting the same request with the same id again returns the existing job.",
        valueName: "id"))
    var id: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp("A request header, as 'Name: value'. Repeat for several.", valueName: "name: value"))
    var headers: [String] = []

    @Flag(help: "Replace DEST if it already exists.")
    var overwrite = false

    @Flag(help: "Wait until the job ends, showing its progress on stderr.")
    var wait = false

    @Flag(help: "Print the job as one line of JSON instead of its id.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if url.isEmpty { throw ValidationError("URL must not be empty") }
        if destination.isEmpty { throw ValidationError("DEST must not be empty") }
        if let id {
            if id.isEmpty { throw ValidationError("--id must not be empty") }
            if id.utf8.count > Limits.maxJobIDLength {
                throw ValidationError("--id is longer than \(Limits.maxJobIDLength) bytes")
            }
        }
        _ = try RequestHeader.dictionary(parsing: headers)
    }

    func run() async throws {
        let headerFields = try RequestHeader.dictionary(parsing: headers)
        let params = TransferProtocol.Submit.Params(
            url: url,
            destination: try AbsolutePath.resolve(destination),
            headers: headerFields.isEmpty ? nil : headerFields,
            overwrite: overwrite ? true : nil,
            id: id
        )
        let client = try clientOptions.connect()
        var job = try client.call(TransferProtocol.Submit.self, params).job
        if wait {
            job = try await JobWaiter(client: client).wait(for: job)
        }
        if json {
            try JSONOutput.print(job)
        } else {
            print(job.id)
        }
        if wait, job.state != .completed {
            throw TransferCtlError.jobUnsuccessful
        }
    }
}
