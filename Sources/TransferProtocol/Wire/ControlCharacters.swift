/// Text from clients and servers made safe for a log line or a terminal.
public enum ControlCharacters {
    /// `text` with each control character written as an escape: `\n`, `\r`, `\t`, and `\u{1B}`
    /// for the others (C0, DEL, C1), the line and paragraph separators U+2028 and U+2029, and
    /// the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069). A hand-off name or
    /// a server's message holding a newline or an escape sequence can then neither forge a log
    /// line nor reach the terminal of whoever reads the log. Text without any is returned as is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
        return result
    }

    /// Whether `scalar` must not reach a log or a terminal as it is.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
