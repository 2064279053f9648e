/// Text from the daemon made safe to print on a terminal.
enum TerminalText {
    /// `text` with control characters (escape sequences, newlines, carriage returns)
    /// replaced by `?`, so a job's URL, path or error cannot redraw the user's terminal.
    static func printable(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            result.append(scalar.properties.generalCategory == .control ? "?" : scalar)
        }
        return String(result)
    }
}
