import ArgumentParser
import Foundation

/// A list of downloads in aria2's input-file format (`transferctl submit -i FILE`, like
/// `aria2c -i FILE`):
///
/// ```
/// # a comment
/// https://example.com/a.iso
///   out=a-renamed.iso
///   dir=/srv/transferd/isos
///   header=Authorization: Bearer …
///   checksum=sha-256=9f86d0…
/// https://example.com/b.iso
/// ```
///
/// A line that starts with neither a space nor a tab holds a URL; aria2 allows mirrors of the
/// same file after it, separated by tabs, of which only the first is used. The indented lines
/// after it are its options: `out=` (the file name, or a path under `dir`), `dir=` (the directory;
/// relative to the current one), `header=` (repeatable) and `checksum=sha-256=HEX`. Lines starting
/// with `#` and blank lines are skipped.
struct InputFile: Equatable {
    /// One download of the list.
    struct Entry: Equatable {
        var url: String
        /// The line the URL is on, for messages.
        var line: Int
        var out: String?
        var dir: String?
        var headers: [String] = []
        var sha256: String?
        /// Mirrors given after the URL, which are not used.
        var ignoredMirrors = 0
    }

    var entries: [Entry]

    /// The options an entry may have.
    static let options = ["out", "dir", "header", "checksum"]

    /// Reads the list in `text`; `name` is the file's name in messages.
    init(parsing text: String, name: String) throws(ValidationError) {
        var entries: [Entry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let first = line.first, first == " " || first == "\t" else {
                let uris = line.split(separator: "\t").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard let url = uris.first else { continue }
                entries.append(Entry(url: url, line: number, ignoredMirrors: uris.count - 1))
                continue
            }
            guard var entry = entries.popLast() else {
                throw ValidationError("\(name):\(number): an option line (indented) before any URL: put the URL on the line above it, unindented")
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ValidationError("\(name):\(number): '\(trimmed.prefix(40))' is not an option: write it as name=value (\(Self.options.joined(separator: ", ")))")
            }
            let key = String(trimmed[..<equals])
            let value = String(trimmed[trimmed.index(after: equals)...])
            switch key {
            case "out":
                guard !value.isEmpty else { throw ValidationError("\(name):\(number): out= needs a file name") }
                entry.out = value
            case "dir":
                guard !value.isEmpty else { throw ValidationError("\(name):\(number): dir= needs a directory") }
                entry.dir = value
            case "header":
                entry.headers.append(value)
            case "checksum":
                entry.sha256 = try Self.sha256(value, at: "\(name):\(number)")
            default:
                throw ValidationError(
                    "\(name):\(number): option '\(key.prefix(40))' is not supported; transferctl reads \(Self.options.map { $0 + "=" }.joined(separator: ", "))")
            }
            entries.append(entry)
        }
        self.entries = entries
    }

    /// The digest of `checksum=TYPE=DIGEST`; only SHA-256 is checked by transferd.
    private static func sha256(_ value: String, at place: String) throws(ValidationError) -> String {
        guard let equals = value.firstIndex(of: "=") else {
            throw ValidationError("\(place): checksum= must be written checksum=sha-256=HEX")
        }
        let type = value[..<equals].lowercased()
        let digest = String(value[value.index(after: equals)...])
        guard type == "sha-256" || type == "sha256" else {
            throw ValidationError("\(place): checksum type '\(type.prefix(20))' is not supported: transferd checks sha-256 only")
        }
        guard digest.utf8.count == 64, digest.allSatisfy(\.isHexDigit) else {
            throw ValidationError("\(place): the sha-256 checksum must be 64 hexadecimal digits, as sha256sum prints it")
        }
        return digest.lowercased()
    }

    /// Reads the list from `path`, or from standard input when `path` is `-`.
    static func read(_ path: String) throws(ValidationError) -> InputFile {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw ValidationError("cannot read the input file \(path): \((error as NSError).localizedDescription)")
            }
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ValidationError("the input file \(path) is not UTF-8 text")
        }
        return try InputFile(parsing: text, name: path == "-" ? "stdin" : path)
    }
}
