/// A parsed single-range `Range` header value (`bytes=N-`, `bytes=N-M`, `bytes=-S`).
enum ByteRangeRequest: Equatable {
    /// `bytes=N-` or `bytes=N-M`.
    case from(Int64, through: Int64?)
    /// `bytes=-S`: the last S bytes.
    case suffix(Int64)

    /// The request in `value`, or nil when it is not a single valid byte range (which the server ignores).
    init?(headerValue value: String) {
        let trimmed = value.trimmingSpaces()
        guard trimmed.lowercased().hasPrefix("bytes=") else { return nil }
        let spec = String(trimmed.dropFirst("bytes=".count)).trimmingSpaces()
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = String(spec[..<dash]).trimmingSpaces()
        let last = String(spec[spec.index(after: dash)...]).trimmingSpaces()
        if first.isEmpty {
            guard let length = Self.number(last) else { return nil }
            self = .suffix(length)
            return
        }
        guard let start = Self.number(first) else { return nil }
        if last.isEmpty {
            self = .from(start, through: nil)
            return
        }
        guard let end = Self.number(last), end >= start else { return nil }
        self = .from(start, through: end)
    }

    /// The bytes selected in content of `total` bytes, or nil when unsatisfiable (416).
    func resolve(total: Int64) -> ClosedRange<Int64>? {
        switch self {
        case .from(let start, let end):
            guard start < total else { return nil }
            return start...min(end ?? (total - 1), total - 1)
        case .suffix(let length):
            guard length > 0, total > 0 else { return nil }
            return max(0, total - length)...(total - 1)
        }
    }

    private static func number(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(text)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}

extension Range where Bound == Int64 {
    /// The number of positions, as an `Int64` (`count` is an `Int`).
    var length: Int64 { upperBound - lowerBound }
}
