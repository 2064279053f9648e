import CLinuxShims
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A download that asks first whether the file changed (`conditional`, as wget's `-N`, curl's
/// `-z` and aria2's `--conditional-get`): the destination left by the last download carries the
/// server's `ETag` (in the extended attribute `user.transferd.etag`) and its `Last-Modified`
/// (as the file's modification time), and the next attempt from byte 0 sends them back as
/// `If-None-Match` and `If-Modified-Since`. A `304` completes the job as unchanged.
enum ConditionalGet {
    static let etagAttribute = "user.transferd.etag"

    /// The validators to send for the destination `name` in `directory`; empty when there is no
    /// regular file there.
    static func headers(in directory: DirectoryHandle, name: String) -> [String: String] {
        var info = stat()
        guard fstatat(directory.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return [:] }
        var headers = ["If-Modified-Since": HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec)))]
        let fd = openat(directory.fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return headers }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let length = buffer.withUnsafeMutableBytes { clinuxshims_fgetxattr(fd, etagAttribute, $0.baseAddress, $0.count) }
        if length > 0, let etag = String(bytes: buffer.prefix(length), encoding: .utf8), etag.hasPrefix("\"") || etag.hasPrefix("W/\"") {
            headers["If-None-Match"] = etag
        }
        return headers
    }

    /// What the server said of the version it sent, to stamp on the landed file.
    struct Stamp: Sendable {
        var etag: String?
        var lastModified: Date?

        init(_ response: URLResponse) {
            let http = response as? HTTPURLResponse
            etag = http?.value(forHTTPHeaderField: "ETag")
            lastModified = http?.value(forHTTPHeaderField: "Last-Modified").flatMap(HTTPDate.parse)
        }

        /// Stamps the open file `fd`: the ETag as an extended attribute (where the filesystem
        /// keeps them; otherwise only the time is compared next time), Last-Modified as its time.
        func apply(to fd: Int32) {
            if let etag, etag.utf8.count < 1024 {
                _ = etag.withCString { clinuxshims_fsetxattr(fd, ConditionalGet.etagAttribute, $0, strlen($0)) }
            }
            if let lastModified {
                let seconds = Int(lastModified.timeIntervalSince1970)
                var times = [timespec(tv_sec: seconds, tv_nsec: 0), timespec(tv_sec: seconds, tv_nsec: 0)]
                _ = futimens(fd, &times)
            }
        }
    }
}
