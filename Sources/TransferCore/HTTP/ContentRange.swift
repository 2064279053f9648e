import Foundation

/// A parsed `Content-Range: bytes */total` header of a 416 answer.
struct UnsatisfiedRange: Equatable {
    var total: Int64

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes */"),
            let total = ContentRange.number(Substring(header.dropFirst(8).trimmingCharacters(in: .whitespaces)))
        else {
            return nil
        }
        self.total = total
    }
}

/// A parsed `Content-Range: bytes first-last/total` header.
struct ContentRange: Equatable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Self.number(bounds[0]), let end = Self.number(bounds[1]),
            start <= end, end < Int64.max
        else { return nil }
        let total: Int64?
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Self.number(parts[1]), end < value else { return nil }
            total = value
        }
        self.start = start
        self.end = end
        self.total = total
    }

    /// Plain decimal digits that fit an Int64 (no sign, no spaces): a hostile header cannot
    /// smuggle in a negative or overflowing value.
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int64(text)
    }
}
