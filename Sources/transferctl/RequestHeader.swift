import ArgumentParser
import Foundation

/// A request header given on the command line as `--header 'Name: value'`.
struct RequestHeader: Equatable {
    var name: String
    var value: String

    /// Splits at the first colon and trims spaces and tabs around the name and the value.
    /// Messages never repeat the argument: header values are often secrets.
    init(parsing argument: String, position: Int, source: String = "--header") throws(ValidationError) {
        guard let colon = argument.firstIndex(of: ":") else {
            throw ValidationError("\(source) #\(position) has no colon; write it as 'Name: value'")
        }
        name = argument[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else {
            throw ValidationError("\(source) #\(position) has an empty name; write it as 'Name: value'")
        }
        value = argument[argument.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// All `--header` arguments (or those of `source`) by name; a name given twice (in any case) is an error.
    static func dictionary(parsing arguments: [String], source: String = "--header") throws(ValidationError) -> [String: String] {
        var headers: [String: String] = [:]
        var seen: Set<String> = []
        for (index, argument) in arguments.enumerated() {
            let header = try RequestHeader(parsing: argument, position: index + 1, source: source)
            guard seen.insert(header.name.lowercased()).inserted else {
                throw ValidationError("\(source) '\(header.name)' is given more than once")
            }
            headers[header.name] = header.value
        }
        return headers
    }
}
