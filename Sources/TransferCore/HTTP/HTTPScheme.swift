import Foundation
import TransferProtocol

/// What transferd lets reach FoundationNetworking and libcurl: http and https URLs only, and
/// timeouts they can represent.
enum HTTPScheme {
    /// Whether `url` is an http or https URL.
    static func isAllowed(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// The scheme of a redirect's `Location` when it names one other than http or https (`ftp`,
    /// `file`, `gopher`…); nil for http, https and relative references, which stay on the
    /// current scheme.
    static func foreignScheme(ofLocation location: String) -> String? {
        let trimmed = location.trimmingCharacters(in: .whitespaces)
        // RFC 3986 §3.1: a scheme is a letter, then letters, digits, "+", "-" or ".", then ":".
        guard let colon = trimmed.firstIndex(of: ":") else { return nil }
        let candidate = trimmed[..<colon]
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        func isSchemeByte(_ byte: UInt8) -> Bool { isLetter(byte) || (0x30...0x39).contains(byte) || byte == 0x2B || byte == 0x2D || byte == 0x2E }
        guard let first = candidate.utf8.first, isLetter(first), candidate.utf8.allSatisfy(isSchemeByte) else { return nil }
        let scheme = candidate.lowercased()
        return scheme == "http" || scheme == "https" ? nil : scheme
    }

    /// `seconds` as FoundationNetworking's timers can take it: whole seconds (it drops fractions,
    /// so 0.5 would mean "at once"), within `Limits.Job.idleTimeoutSeconds`.
    static func timeout(_ seconds: Double) -> TimeInterval {
        guard seconds.isFinite else { return Limits.Job.idleTimeoutSeconds.upperBound }
        return min(max(seconds.rounded(.up), Limits.Job.idleTimeoutSeconds.lowerBound), Limits.Job.idleTimeoutSeconds.upperBound)
    }
}

/// The `Content-Length` of an answer, as FoundationNetworking gives it: repeated fields joined by commas.
enum ContentLength {
    /// A description of conflicting lengths ("two different Content-Length values, 12 and 5"), or
    /// nil when the field holds one value (repeated identical values are one, per RFC 9110 §8.6).
    static func conflict(_ field: String) -> String? {
        let values = Set(field.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        guard values.count > 1 else { return nil }
        return "different Content-Length values (\(values.sorted().prefix(4).joined(separator: ", ")))"
    }
}
