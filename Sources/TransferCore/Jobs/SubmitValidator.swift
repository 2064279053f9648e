import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Checks a submit request before anything is written, with errors that name the problem and the fix.
enum SubmitValidator {
    /// Headers transferd sets itself, so a client may not.
    static let reservedHeaders: Set<String> = [
        "range", "if-range", "accept-encoding", "host", "content-length", "transfer-encoding", "connection",
        // Hop-by-hop and framing headers: they would change how the connection behaves.
        "te", "trailer", "upgrade", "keep-alive", "proxy-connection", "expect",
    ]

    static func validateID(_ id: String) throws(CoreError) {
        guard Limits.isValidName(id) else {
            throw CoreError(
                .invalidParameter("id"),
                "job id '\(id.prefix(64))' is not allowed: use 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -")
        }
    }

    /// A session name: the same characters and length as a job id.
    static func validateSession(_ session: String) throws(CoreError) {
        guard Limits.isValidName(session) else {
            throw CoreError(
                .invalidParameter("session"),
                "session '\(session.prefix(64))' is not allowed: use 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, e.g. backup.nightly")
        }
    }

    static func validateURL(_ text: String) throws(CoreError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw CoreError(.unsupportedURL, "'\(Redaction.urlText(text).prefix(200))' is not a URL: give an absolute http:// or https:// URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw CoreError(.unsupportedURL, "the URL scheme '\(scheme.prefix(40))' is not supported: transferd fetches only http:// and https:// URLs")
        }
        guard let host = url.host(percentEncoded: false), !host.isEmpty else {
            throw CoreError(.unsupportedURL, "the URL '\(Redaction.urlText(text).prefix(200))' has no host")
        }
        // Decoded, the host is what the host rules judge; a name with spaces, controls or
        // delimiters in it is not one libcurl would read the same way.
        guard host.unicodeScalars.allSatisfy(isHostCharacter) else {
            throw CoreError(.unsupportedURL, "the host of '\(Redaction.urlText(text).prefix(200))' contains characters a host name cannot have")
        }
        return url
    }

    /// At most this many request headers per job…
    static let maxHeaderCount = 64
    /// …each name at most this many bytes…
    static let maxHeaderNameBytes = 256
    /// …each value at most this many bytes…
    static let maxHeaderValueBytes = 8192
    /// …and names and values together at most this many (servers commonly refuse more than 8 to 16 KiB).
    static let maxHeaderBytes = 32768

    /// Checks names (HTTP tokens, no duplicates in another case, none transferd sets) and values
    /// (no control characters but tab, so nothing can be injected or folded into another line).
    /// Messages name the header but never quote its value, which may be a credential.
    static func validateHeaders(_ headers: [String: String]) throws(CoreError) {
        guard headers.count <= maxHeaderCount else {
            throw CoreError(.invalidHeader, "\(headers.count) headers were given; at most \(maxHeaderCount) are accepted")
        }
        let total = headers.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard total <= maxHeaderBytes else {
            throw CoreError(.invalidHeader, "the headers' names and values come to \(total) bytes; at most \(maxHeaderBytes) are accepted")
        }
        var seen: Set<String> = []
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            guard !name.isEmpty, name.utf8.count <= maxHeaderNameBytes, name.utf8.allSatisfy(isTokenCharacter) else {
                throw CoreError(
                    .invalidHeader,
                    "header name '\(name.prefix(100))' is not a valid HTTP field name: use 1 to \(maxHeaderNameBytes) letters, digits and !#$%&'*+-.^_`|~")
            }
            guard seen.insert(name.lowercased()).inserted else {
                throw CoreError(.invalidHeader, "header \(name) is given twice (names are case-insensitive): give it once")
            }
            guard !reservedHeaders.contains(name.lowercased()) else {
                throw CoreError(.invalidHeader, "header \(name) is set by transferd itself and cannot be given")
            }
            guard value.utf8.count <= maxHeaderValueBytes else {
                throw CoreError(.invalidHeader, "the value of header \(name) is \(value.utf8.count) bytes long; at most \(maxHeaderValueBytes) are accepted")
            }
            if let control = value.unicodeScalars.first(where: isForbiddenInValue) {
                let code = "U+" + String(control.value, radix: 16, uppercase: true).leftPadded(to: 4)
                throw CoreError(
                    .invalidHeader,
                    "the value of header \(name) contains the control character \(code); CR, LF, NUL and other controls "
                        + "(tab excepted) are refused because they could inject or fold header lines")
            }
        }
    }

    /// Checks the path's form (absolute, no NUL, `.` or `..`, within PATH_MAX and NAME_MAX, inside
    /// one of `roots`), then walks to its directory from that root without following a symbolic
    /// link, and checks what is there now. When the daemon writes for another user, `owner` must be
    /// able to enter each directory from the root down, write the last one, and replace an
    /// existing file.
    static func validateDestination(_ path: String, overwrite: Bool, roots: AllowedRoots, owner: DownloadOwner) throws(CoreError) {
        var opened: [String: DirectoryHandle] = [:]
        try validateDestination(path, overwrite: overwrite, roots: roots, access: owner.accessToCheck(), opened: &opened)
    }

    /// `validateDestination` for several destinations of one user: each directory is opened once,
    /// and kept in `opened` (by path) for the next destination in it.
    static func validateDestination(
        _ path: String, overwrite: Bool, roots: AllowedRoots, access: UserAccess?, opened: inout [String: DirectoryHandle]
    ) throws(CoreError) {
        let destination: DestinationPath
        let directory: DirectoryHandle
        do throws(DestinationError) {
            destination = try DestinationPath.parse(path, roots: roots)
            if let known = opened[destination.directory] {
                directory = known
            } else {
                directory = try DirectoryWalker.open(destination, access: access)
                opened[destination.directory] = directory
            }
        } catch {
            throw CoreError(.invalidDestination, error.message)
        }
        guard let existing = directory.status(of: destination.name) else { return }
        if (existing.st_mode & S_IFMT) == S_IFLNK {
            throw CoreError(
                .invalidDestination,
                "destination \(path) is a symbolic link, and transferd follows none below an allowed root (\(destination.root)): "
                    + "remove the link, or give the path of the real file")
        }
        guard (existing.st_mode & S_IFMT) == S_IFREG else {
            throw CoreError(.invalidDestination, "destination \(path) exists and is not a regular file; transferd replaces only regular files")
        }
        guard overwrite else {
            throw CoreError(.destinationExists, "destination \(path) already exists: remove it, or submit with \(parameter: .submitOverwrite) to replace it")
        }
        if let access, let info = try? directory.status(), !access.mayReplace(existing, in: info) {
            throw CoreError(
                .invalidDestination,
                "destination \(path) belongs to uid \(existing.st_uid) and \(destination.directory) is sticky, so only its owner may "
                    + "replace it: remove it as its owner, or choose another name")
        }
    }

    /// Why a journaled, unfinished job must not start, if it must not: a value that submit refuses
    /// now (an older version, or a damaged but well-formed record, let it through).
    static func replayProblem(_ job: JobRecord) -> String? {
        do throws(CoreError) {
            _ = try validateURL(job.url)
            try validateHeaders(job.headers)
            try validateRetryLimits(job.retry)
            try validateSize(job.expectedSize)
            _ = try validateSHA256(job.expectedSha256)
            if job.idChosenByClient { try validateID(job.wireID) }
            if let session = job.session { try validateSession(session) }
        } catch {
            return error.message
        }
        for (name, value) in [("checkpoint_bytes", job.checkpointBytes), ("total_bytes", job.totalBytes), ("furthest_bytes", job.furthestBytes)] {
            if let value, !Limits.Job.size.contains(value) { return "\(name) is \(value)" }
        }
        if let segments = job.segments, !Limits.Job.segments.contains(segments) { return "segments is \(segments)" }
        for part in job.parts ?? [] where part.start <= job.checkpointBytes || part.end <= part.start || part.end > (job.totalBytes ?? 0) {
            return "parts holds \(part.start)..<\(part.end), outside \(job.checkpointBytes)..<\(job.totalBytes ?? 0)"
        }
        return nil
    }

    /// A SHA-256 in hex (either case); returns it in lowercase.
    static func validateSHA256(_ text: String?) throws(CoreError) -> String? {
        guard let text else { return nil }
        let hex = text.lowercased()
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else {
            throw CoreError(.invalidParameter("sha256"), "sha256 '\(text.prefix(80))' is not a SHA-256: give 64 hexadecimal digits, as printed by sha256sum")
        }
        return hex
    }

    /// Checks every number of a job's retry limits against `Limits.Job`, naming the parameter
    /// and its range.
    static func validateRetryLimits(_ limits: RetryLimits?) throws(CoreError) {
        guard let limits else { return }
        if let attempts = limits.maxAttempts, !Limits.Job.maxAttempts.contains(attempts) {
            throw outOfRange("retry.max_attempts", attempts, Limits.Job.maxAttempts, "attempts (1 means no retries)")
        }
        let durations = [
            ("retry.max_time_seconds", limits.maxTimeSeconds, Limits.Job.maxTimeSeconds),
            ("retry.idle_timeout_seconds", limits.idleTimeoutSeconds, Limits.Job.idleTimeoutSeconds),
            ("retry.low_speed_seconds", limits.lowSpeedSeconds, Limits.Job.lowSpeedSeconds),
        ]
        for (name, value, range) in durations {
            if let value, !range.contains(value) { throw outOfRange(name, value, range, "seconds") }
        }
        if let rate = limits.lowSpeedBytesPerSecond, !Limits.Job.lowSpeedBytesPerSecond.contains(rate) {
            throw outOfRange("retry.low_speed_bytes_per_second", rate, Limits.Job.lowSpeedBytesPerSecond, "bytes per second (0 turns the check off)")
        }
    }

    /// Checks an expected size against `Limits.Job.size`.
    /// A start time and a deadline: within ten years, the deadline still ahead and after the start.
    static func validateTimes(notBefore: Date?, deadline: Date?) throws(CoreError) {
        let now = Date()
        let latest = now.addingTimeInterval(Limits.Job.maxTimeSeconds.upperBound)
        for (name, time) in [("not_before", notBefore), ("deadline", deadline)] {
            if let time, time > latest {
                throw CoreError(.invalidParameter(name), "\(name) \(WireCoding.formatTimestamp(time)) is more than ten years ahead: give a nearer time")
            }
        }
        if let deadline, deadline <= now {
            throw CoreError(.invalidParameter("deadline"), "deadline \(WireCoding.formatTimestamp(deadline)) has passed already: give a time ahead, or leave it out")
        }
        if let notBefore, let deadline, notBefore >= deadline {
            throw CoreError(
                .invalidParameter("deadline"),
                "deadline \(WireCoding.formatTimestamp(deadline)) is not after not_before \(WireCoding.formatTimestamp(notBefore)): the job could never run; "
                    + "give a deadline after the start (transferctl's --deadline +DURATION counts from --not-before)")
        }
    }

    /// `limit_rate` as bytes per second: nil when absent or 0 (no limit).
    static func validateLimitRate(_ text: String?) throws(CoreError) -> Int64? {
        guard let text else { return nil }
        if let problem = ByteRate.problem("limit_rate", text) { throw CoreError(.invalidParameter("limit_rate"), problem) }
        return ByteRate.limit(text)
    }

    /// `label`: at most 1,024 bytes of text without control characters (it is shown in tables and logs).
    static func validateLabel(_ label: String?) throws(CoreError) {
        guard let label else { return }
        guard label.utf8.count <= 1024, !label.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) }) else {
            throw CoreError(.invalidParameter("label"), "label must be at most 1,024 bytes of text without control characters (no line breaks or tabs)")
        }
    }

    /// `segments`: 1 to `Limits.Job.segments` connections.
    static func validateSegments(_ segments: Int?, isUpload: Bool) throws(CoreError) -> Int? {
        guard let segments else { return nil }
        if isUpload {
            throw CoreError(.invalidParameter("segments"), "segments applies to downloads only: an upload is sent over one connection; leave it out")
        }
        guard Limits.Job.segments.contains(segments) else { throw outOfRange("segments", segments, Limits.Job.segments, "connections") }
        return segments
    }

    static func validateSize(_ size: Int64?) throws(CoreError) {
        guard let size, !Limits.Job.size.contains(size) else { return }
        throw outOfRange("size", size, Limits.Job.size, "bytes")
    }

    /// "size is -1: give 0 to 1152921504606846976 bytes".
    static func outOfRange<T: Comparable>(_ name: String, _ value: T, _ range: ClosedRange<T>, _ unit: String) -> CoreError {
        CoreError(.invalidParameter(name), "\(name) is \(shown(value)): give \(shown(range.lowerBound)) to \(shown(range.upperBound)) \(unit)")
    }

    /// A number as a message shows it: whole values without a fraction (86400, not 86400.0).
    private static func shown<T>(_ value: T) -> String {
        if let double = value as? Double, double.isFinite, double.rounded() == double, abs(double) < 1e15 {
            return String(Int64(double))
        }
        return "\(value)"
    }

    /// Refuses a download whose expected size does not fit in the destination's free space
    /// minus the reserve.
    static func validateSpace(for size: Int64, destination: String, reserve: Int64) throws(CoreError) {
        let directory = FileIO.parentDirectory(of: destination)
        guard let available = FileIO.availableBytes(directory), available - reserve < size else { return }
        throw CoreError(
            .insufficientSpace,
            "\(directory) has \(max(0, available)) bytes free; the download needs \(size) and \(reserve) are kept free "
                + "(disk_reserve_bytes in the configuration): free some space or choose another destination")
    }

    /// C0 controls but tab, DEL, C1 controls, and the Unicode line and paragraph separators.
    private static func isForbiddenInValue(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// Letters, digits, `-`, `.`, `_`, `~`, IPv6's `:` and a zone's `%`, or any non-ASCII
    /// character that is not a control or space (international names).
    private static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
        case 0x2D, 0x2E, 0x5F, 0x7E, 0x3A, 0x25: return true
        case 0x00...0x7F: return false
        default: return !isForbiddenInValue(scalar) && !scalar.properties.isWhitespace
        }
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
