import ArgumentParser
import TransferProtocol

/// `transferctl pause ID... | --session S | --all`: holds jobs where they are.
struct PauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Hold jobs: a running transfer checkpoints and stops, queued and waiting jobs stay put.",
        discussion: """
            A paused job keeps its place in the queue and its partial file, survives restarts, and \
            shows as 'paused' in status; transferctl resume continues it from its checkpoint. Pausing \
            a finished job is refused (exit status 4). With --all, root also holds the daemon: no \
            transfer starts, whoever submits it, until root runs transferctl resume --all. Prints \
            'paused ID' for each job (with --json, the answer as one line of JSON); an id that names \
            no job of yours is reported on stderr and the exit status is 4.
            """
    )

    @OptionGroup var selection: JobSelectionOptions

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws { try selection.validate() }

    func run() async throws {
        try selection.call(TransferProtocol.Pause.self, verb: "paused", with: clientOptions) { hold in
            hold
                ? "transferd holds all transfers: none starts until transferctl resume --all"
                : nil
        }
    }
}

/// How `pause` and `resume` choose jobs: ids, a session or all, and how they print the answer.
struct JobSelectionOptions: ParsableArguments {
    @Argument(help: "The ids of the jobs.", completion: JobIDCompletion.kind { $0 == "resume" ? .paused : .unfinished })
    var ids: [String] = []

    @Option(help: ArgumentHelp("Every unfinished job of yours in this session.", valueName: "name"))
    var session: String?

    @Flag(help: "Every unfinished job of yours (root: everyone's, and the daemon-wide hold).")
    var all = false

    @Flag(help: "Print the answer as one line of JSON.")
    var json = false

    func validate() throws {
        let ways = [!ids.isEmpty, session != nil, all].filter { $0 }.count
        if ways == 0 { throw ValidationError("say which jobs: give their ids, --session NAME or --all") }
        if ways > 1 { throw ValidationError("give job ids, --session or --all, only one of them") }
        if ids.contains(where: \.isEmpty) { throw ValidationError("ID must not be empty") }
        if let session, session.isEmpty { throw ValidationError("--session needs a name") }
    }

    var params: JobSelection {
        JobSelection(ids: ids.isEmpty ? nil : ids, session: session, all: all ? true : nil)
    }

    /// Calls `method`, prints `<verb> ID` per job (or the answer as JSON) and the hold's note
    /// `holdNote` gives; ids not found go to stderr and make the exit status 4.
    func call<M: RPCMethod>(
        _ method: M.Type, verb: String, with options: ClientOptions, holdNote: (Bool) -> String?
    ) throws where M.Params == JobSelection, M.Result == JobSelectionResult {
        let client = try options.connect()
        let result = try client.call(method, params)
        if json {
            try JSONOutput.print(result)
        } else {
            for job in result.jobs { print("\(verb) \(TerminalText.printable(job.id))") }
            if result.jobs.isEmpty, result.notFound.isEmpty { StandardError.writeLine("no unfinished jobs matched; nothing was \(verb)") }
        }
        if let hold = result.hold, let note = holdNote(hold) { StandardError.writeLine(note) }
        for id in result.notFound {
            StandardError.writeLine("transferctl: no such job: \(TerminalText.printable(id)) (see transferctl status for your jobs)")
        }
        if !result.notFound.isEmpty { throw ExitCode.requestRefused }
    }
}
