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
        let allowed = id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
        guard allowed, (1...Limits.maxJobIDLength).contains(id.utf8.count), id != ".", id != ".." else {
            throw RPCError(
                .invalidParams,
                "job id '\(id.prefix(64))' is not allowed: use 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -")
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

    /// Checks the path's form (absolute, no NUL, `.` or `..`, within PATH_MAX and NAME_MAX, inside
    /// one of `roots`), then walks to its directory from that root without following a symbolic
    /// link, and checks what is there now. When the daemon writes for another user, `owner` must be
    /// able to enter each directory from the root down, write the last one, and replace an
    /// existing file.
    static func validateDestination(_ path: String, overwrite: Bool, roots: AllowedRoots, owner: DownloadOwner) throws(RPCError) {
        let destination: DestinationPath
        let directory: DirectoryHandle
        let access = owner.accessToCheck()
        do throws(DestinationError) {
            destination = try DestinationPath.parse(path, roots: roots)
            directory = try DirectoryWalker.open(destination, access: access)
        } catch {
            throw RPCError(.invalidDestination, error.message)
        }
        guard let existing = directory.status(of: destination.name) else { return }
        if (existing.st_mode & S_IFMT) == S_IFLNK {
            throw RPCError(
                .invalidDestination,
                "destination \(path) is a symbolic link, and transferd follows none below an allowed root (\(destination.root)): "
                    + "remove the link, or give the path of the real file")
        }
        guard (existing.st_mode & S_IFMT) == S_IFREG else {
            throw RPCError(.invalidDestination, "destination \(path) exists and is not a regular file; transferd replaces only regular files")
        }
        guard overwrite else {
            throw RPCError(.destinationExists, "destination \(path) already exists: remove it, or submit with overwrite (transferctl submit --overwrite) to replace it")
        }
        if let access, let info = try? directory.status(), !access.mayReplace(existing, in: info) {
            throw RPCError(
                .invalidDestination,
                "destination \(path) belongs to uid \(existing.st_uid) and \(destination.directory) is sticky, so only its owner may "
                    + "replace it: remove it as its owner, or choose another name")
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
