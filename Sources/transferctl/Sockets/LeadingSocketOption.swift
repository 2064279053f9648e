/// Lets `--socket PATH` come before the command (`transferctl --socket /x status`), as users of
/// other daemons' CLIs expect, by moving it after the command name, where each command reads it.
enum LeadingSocketOption {
    static func reorder(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var rest = arguments[...]
        while let first = rest.first {
            if first == "--socket", rest.count >= 2 {
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if first.hasPrefix("--socket=") {
                leading.append(first)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !leading.isEmpty, let command = rest.first, !command.hasPrefix("-") else { return arguments }
        return [command] + leading + rest.dropFirst()
    }
}
