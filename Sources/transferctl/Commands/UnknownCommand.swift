import ArgumentParser
import TransferProtocol

/// Catches a misspelt command (`transferctl sumbit …`) before ArgumentParser reads it as
/// arguments of the root command ("3 unexpected arguments"), and names the closest command.
enum UnknownCommand {
    /// The message for `arguments` (after `LeadingSocketOption.reorder`) when its first word
    /// is neither an option nor a command; nil otherwise.
    static func message(for arguments: [String], commands: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-"), !commands.contains(first), first != "help" else { return nil }
        let shown = String(TerminalText.printable(first).prefix(40))
        let suggestion = ParameterSuggestion.closest(to: first, among: commands).map { ": did you mean '\($0)'?" } ?? "."
        return "transferctl: unknown command '\(shown)'\(suggestion) The commands are \(commands.joined(separator: ", ")); "
            + "transferctl help COMMAND describes one"
    }

    /// The names of transferctl's commands.
    static var commandNames: [String] {
        TransferCtl.configuration.subcommands.compactMap { $0.configuration.commandName }
    }
}
