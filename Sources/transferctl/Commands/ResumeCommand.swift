import ArgumentParser
import TransferProtocol

/// `transferctl resume ID... | --session S | --all`: queues paused jobs again.
struct ResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Queue paused jobs again; a download continues from its checkpoint.",
        discussion: """
            Each job goes back to its place in submission order. A job that is not paused is left as \
            it is; a finished one is refused (exit status 4). With --all, root also lifts the \
            daemon-wide hold of transferctl pause --all. Prints 'resumed ID' for each job (with \
            --json, the answer as one line of JSON); an id that names no job of yours is reported \
            on stderr and the exit status is 4.
            """
    )

    @OptionGroup var selection: JobSelectionOptions

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws { try selection.validate() }

    func run() async throws {
        try selection.call(TransferProtocol.Resume.self, verb: "resumed", with: clientOptions) { hold in
            hold
                ? "transferd holds all transfers (root's pause --all): none starts until root runs transferctl resume --all"
                : "the hold on transfers is lifted"
        }
    }
}
