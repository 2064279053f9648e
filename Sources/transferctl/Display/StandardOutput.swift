import Foundation

/// Writes to stdout at once, unbuffered, so a stream of lines reaches a pipe (`| jq`) as it
/// happens. A command writes either through this or through `print`, not both.
enum StandardOutput {
    static func write(_ text: String) {
        try? FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
    }
}
