import ArgumentParser
import Foundation

/// A request header given on the command line as `--header 'Name: value'`.
struct RequestHeader: Equatable {
    var name: String
    var value: String

    /// Splits at the first colon and trims spaces and tabs around the name and the value.
    /// Messages never repeat the argument: header values are often secrets.
    init(parsing argument: String, position: Int) throws(ValidationError) {
        guard let colon = argument.firstIndex(of: ":") else {
            throw ValidationError("--header #\(position) has no colon; write it as 'Name: value'")
        }
        name = argument[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else {
            throw ValidationError("--header #\(position) has an empty name; write it as 'Name: value'")
        }
        value = argument[argument.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// All `--header` arguments by name; a name given twice (in any case) is an error.
    static func dictionary(parsing arguments: [String]) throws(ValidationError) -> [String: String] {
        var headers: [String: String] = [:]
        var seen: Set<String> = []
        for (index, argument) in arguments.enumerated() {
            let header = try RequestHeader(parsing: argument, position: index + 1)
            guard seen.insert(header.name.lowercased()).inserted else {
                throw ValidationError("--header '\(header.name)' is given more than once")
            }
            headers[header.name] = header.value
        }
        return headers
    }
}
