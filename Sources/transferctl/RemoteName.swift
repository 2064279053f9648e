import Foundation

/// The file name `-O` (`--remote-name`) gives a download: the last segment of the URL's path,
/// percent-decoded and made safe, like curl's `-O`. Never a name the server offers
/// (Content-Disposition, a redirect's target): only what the user typed.
enum RemoteName {
    /// The name used when the URL's path ends without one (`https://example.com/`).
    static let fallback = "index.html"
    /// The longest name kept, in bytes (NAME_MAX).
    static let maxBytes = 255

    /// The file name for `url`.
    static func of(_ url: String) -> String {
        sanitized(percentDecoded(lastSegment(of: url)))
    }

    /// The last segment of the URL's path, still percent-encoded; the query and fragment are not
    /// part of it.
    static func lastSegment(of url: String) -> String {
        let path: Substring
        if let components = URLComponents(string: url) {
            path = Substring(components.percentEncodedPath)
        } else {
            // Not a URL Foundation reads: cut at the query or fragment by hand; the daemon will say what is wrong with it.
            var rest = Substring(url)
            if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
            rest = rest.prefix { $0 != "?" && $0 != "#" }
            path = rest.firstIndex(of: "/").map { rest[$0...] } ?? ""
        }
        return String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
    }

    /// `%XX` sequences decoded to the bytes they stand for; the text unchanged where they do not
    /// form UTF-8.
    static func percentDecoded(_ segment: String) -> String {
        segment.removingPercentEncoding ?? segment
    }

    /// A name that is safe to create in a directory: no `/` or NUL (nor other control characters),
    /// not `.` or `..`, not hidden and not taken for an option (no leading `.` or `-`), at most
    /// `maxBytes` bytes; `index.html` when nothing is left.
    static func sanitized(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            switch scalar.value {
            case 0x2F, 0x5C: scalars.append("_")  // '/' and '\': never a path
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: scalars.append("_")
            default: scalars.append(scalar)
            }
        }
        var result = String(scalars).trimmingCharacters(in: .whitespaces)
        if result.isEmpty || result == "." || result == ".." { return fallback }
        // ".bashrc" would be hidden (and could be a shell's start-up file); "-rf" would read as an option.
        while let first = result.first, first == "." || first == "-" {
            result = "_" + result.dropFirst()
        }
        return truncated(result)
    }

    /// `name` cut to `maxBytes` bytes on a character boundary, keeping a short extension.
    static func truncated(_ name: String) -> String {
        guard name.utf8.count > maxBytes else { return name }
        var stem = Substring(name)
        var suffix = Substring("")
        if let dot = name.lastIndex(of: "."), name.utf8.distance(from: dot, to: name.utf8.endIndex) <= 16 {
            stem = name[..<dot]
            suffix = name[dot...]
        }
        let budget = maxBytes - suffix.utf8.count
        var kept = ""
        for character in stem {
            if kept.utf8.count + String(character).utf8.count > budget { break }
            kept.append(character)
        }
        return kept + suffix
    }
}
