import ArgumentParser
import Foundation
import TransferProtocol

/// `-F`/`--form` as curl spells it: `name=@FILE[;type=TYPE][;filename=NAME]` is the part that
/// carries the file, `name=<FILE` a field read from a file, `name=value` a field as written.
enum FormOption {
    /// The most bytes a field read with `name=<FILE` may have.
    static let maxFieldFileBytes = 64 << 10

    /// The path of the one part written `name=@FILE`.
    static func file(in options: [String]) throws -> String {
        let files = try options.compactMap { try split($0).content.first == "@" ? attributes(of: split($0).content).path : nil }
        guard files.count == 1 else {
            throw ValidationError(
                files.isEmpty
                    ? "-F needs one part that carries the file, written name=@FILE (for example -F file=@photo.jpg)"
                    : "-F names \(files.count) files: one upload sends one file (name=@FILE once; other parts are name=value)")
        }
        return files[0]
    }

    /// The form's parts, in order; the file's part has its file name (by default the file's own).
    static func parts(_ options: [String]) throws -> [FormPart] {
        try options.map { option in
            let (name, content) = try split(option)
            if content.first == "@" {
                let (path, type, filename) = try attributes(of: content)
                let ownName = path.split(separator: "/").last.map(String.init)
                return FormPart(fileNamed: name, filename: filename ?? ownName, contentType: type)
            }
            if content.first == "<" {
                let path = String(content.dropFirst())
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw ValidationError("-F \(name)=<\(path): cannot read \(path); give a readable file whose content is the field's value")
                }
                guard data.count <= maxFieldFileBytes, let text = String(data: data, encoding: .utf8) else {
                    throw ValidationError("-F \(name)=<\(path): a field read from a file must be UTF-8 text of at most \(maxFieldFileBytes / 1024) KiB")
                }
                return FormPart(name: name, value: text)
            }
            return FormPart(name: name, value: String(content))
        }
    }

    private static func split(_ option: String) throws -> (name: String, content: Substring) {
        guard let equals = option.firstIndex(of: "="), equals != option.startIndex else {
            throw ValidationError("-F '\(option.prefix(60))' is not name=content: write name=@FILE for the file, name=value for a field")
        }
        return (String(option[..<equals]), option[option.index(after: equals)...])
    }

    /// `@FILE;type=TYPE;filename=NAME` taken apart.
    private static func attributes(of content: Substring) throws -> (path: String, type: String?, filename: String?) {
        var pieces = content.dropFirst().split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        let path = pieces.removeFirst()
        guard !path.isEmpty else { throw ValidationError("-F ...=@ needs the file's path after the @ (for example file=@photo.jpg)") }
        var type: String?
        var filename: String?
        for piece in pieces {
            let trimmed = piece.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("type=") {
                type = String(trimmed.dropFirst(5))
            } else if trimmed.hasPrefix("filename=") {
                filename = String(trimmed.dropFirst(9)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            } else {
                throw ValidationError("-F ...=@\(path);\(trimmed.prefix(40)): only type= and filename= may follow the file")
            }
        }
        return (path, type, filename)
    }
}
