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

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}
