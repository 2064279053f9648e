import Foundation

/// Writes diagnostics to stderr, unbuffered, so they never mix into stdout.
enum StandardError {
    /// Writes `text` as is.
    static func write(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    /// Writes `line`, adding a newline unless it already ends with one.
    static func writeLine(_ line: String) {
        write(line.hasSuffix("\n") ? line : line + "\n")
    }
}
