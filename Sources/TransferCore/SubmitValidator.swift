import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Checks a submit request before anything is written, with errors that name the problem and the fix.
enum SubmitValidator {
    /// Headers transferd sets itself, so a client may not.
    static let reservedHeaders: Set<String> = ["range", "if-range", "accept-encoding", "host", "content-length", "transfer-encoding", "connection"]

    static func validateID(_ id: String) throws(RPCError) {
        let allowed = id.utf8.allSatisfy(isIDCharacter)
        guard allowed, (1...Limits.maxJobIDLength).contains(id.utf8.count), id != ".", id != ".." else {
            throw RPCError(
                .invalidParams,
                "job id '\(id.prefix(64))' is not allowed: use 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -")
        }
    }

    /// A session name: the same characters and length as a job id.
    static func validateSession(_ session: String) throws(RPCError) {
        guard (1...Limits.maxJobIDLength).contains(session.utf8.count), session != ".", session != "..",
            session.utf8.allSatisfy(isIDCharacter)
        else {
            throw RPCError(
                .invalidParams,
                "session '\(session.prefix(64))' is not allowed: use 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, e.g. backup.nightly")
        }
    }

    static func isIDCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    static func validateURL(_ text: String) throws(RPCError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw RPCError(.unsupportedURL, "'\(text.prefix(200))' is not a URL: give an absolute http:// or https:// URL")
        }
        guard scheme == "http" || scheme == "https" else {
            throw RPCError(.unsupportedURL, "the URL scheme '\(scheme)' is not supported: transferd fetches only http:// and https:// URLs")
        }
        guard let host = url.host, !host.isEmpty else {
            throw RPCError(.unsupportedURL, "the URL '\(text.prefix(200))' has no host")
        }
        return url
    }

    static func validateHeaders(_ headers: [String: String]) throws(RPCError) {
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenCharacter) else {
                throw RPCError(.invalidHeader, "header name '\(name.prefix(100))' is not a valid HTTP field name")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw RPCError(.invalidHeader, "the value of header \(name) contains CR, LF or NUL, which would inject headers")
            }
            guard !reservedHeaders.contains(name.lowercased()) else {
                throw RPCError(.invalidHeader, "header \(name) is set by transferd itself and cannot be given")
            }
        }
    }

    /// Checks the path's form and what is on disk now.
    static func validateDestination(_ path: String, overwrite: Bool) throws(RPCError) {
        guard path.hasPrefix("/") else {
            throw RPCError(.invalidDestination, "destination '\(path.prefix(200))' is not an absolute path: give the full path, starting with /")
        }
        guard !path.utf8.contains(0) else {
            throw RPCError(.invalidDestination, "destination contains a NUL byte")
        }
        guard path.utf8.count < PATH_MAX else {
            throw RPCError(.invalidDestination, "destination is longer than \(PATH_MAX - 1) bytes")
        }
        let components = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard let name = components.last, !name.isEmpty else {
            throw RPCError(.invalidDestination, "destination '\(path)' names a directory: add the file name")
        }
        for component in components {
            guard component != "..", component != "." else {
                throw RPCError(.invalidDestination, "destination '\(path)' contains '\(component)': give a path without . or .. components")
            }
            guard component.utf8.count <= 255 - 40 else {
                throw RPCError(.invalidDestination, "a component of destination '\(path.prefix(100))…' is longer than 215 bytes")
            }
        }
        let directory = FileIO.parentDirectory(of: path)
        var info = stat()
        guard stat(directory, &info) == 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            let fix: String
            switch code {
            case ENOENT: fix = "create it first"
            case EACCES: fix = "make it reachable by the transferd service's user, or choose another directory"
            case ENOTDIR: fix = "a component of that path is a file, not a directory"
            default: fix = "choose another directory"
            }
            throw RPCError(.invalidDestination, "the directory \(directory) of the destination cannot be used (\(reason)): \(fix)")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw RPCError(.invalidDestination, "\(directory) is not a directory")
        }
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFREG else {
                throw RPCError(.invalidDestination, "destination \(path) exists and is not a regular file; transferd replaces only regular files")
            }
            guard overwrite else {
                throw RPCError(.destinationExists, "destination \(path) already exists: remove it, or submit with overwrite (transferctl submit --overwrite) to replace it")
            }
        }
    }

    /// A SHA-256 in hex (either case); returns it in lowercase.
    static func validateSHA256(_ text: String?) throws(RPCError) -> String? {
        guard let text else { return nil }
        let hex = text.lowercased()
        guard hex.utf8.count == 64, hex.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }) else {
            throw RPCError(.invalidParams, "sha256 '\(text.prefix(80))' is not a SHA-256: give 64 hexadecimal digits, as printed by sha256sum")
        }
        return hex
    }

    static func validateRetryLimits(_ limits: RetryLimits?) throws(RPCError) {
        guard let limits else { return }
        if let attempts = limits.maxAttempts, attempts < 1 {
            throw RPCError(.invalidParams, "retry.max_attempts must be at least 1 (1 means no retries)")
        }
        for (name, value) in [("max_time_seconds", limits.maxTimeSeconds), ("idle_timeout_seconds", limits.idleTimeoutSeconds), ("low_speed_seconds", limits.lowSpeedSeconds)] {
            if let value, !(value > 0 && value.isFinite) {
                throw RPCError(.invalidParams, "retry.\(name) must be a positive number of seconds")
            }
        }
        if let rate = limits.lowSpeedBytesPerSecond, rate < 0 {
            throw RPCError(.invalidParams, "retry.low_speed_bytes_per_second must not be negative (0 turns the check off)")
        }
    }

    /// Refuses a download whose expected size does not fit in the destination's free space
    /// minus the reserve.
    static func validateSpace(for size: Int64, destination: String, reserve: Int64) throws(RPCError) {
        guard size >= 0 else {
            throw RPCError(.invalidParams, "size must not be negative")
        }
        let directory = FileIO.parentDirectory(of: destination)
        guard let available = FileIO.availableBytes(directory), available - reserve < size else { return }
        throw RPCError(
            .insufficientSpace,
            "\(directory) has \(max(0, available)) bytes free; the download needs \(size) and \(reserve) are kept free "
                + "(disk_reserve_bytes in the configuration): free some space or choose another destination")
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
