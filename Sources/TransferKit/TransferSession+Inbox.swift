import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The files of downloads created without a destination: the daemon keeps each in its inbox
/// until the task's end is acknowledged. The user's own daemon's inbox is the user's, so the file
/// is handed over where it is; the system service's is not readable by path, so the session asks
/// for the open file over the upload socket and copies it into the session's download directory.
extension TransferSession {
    /// A file this process may read and move for the inbox download `job`, and whether it is a
    /// copy of the session's (deleted once the delegate returned) rather than the daemon's.
    func inboxFile(of job: Job) throws(TransferError) -> (url: URL, isCopy: Bool) {
        let directory = (job.destination as NSString).deletingLastPathComponent
        if access(job.destination, R_OK) == 0, access(directory, W_OK | X_OK) == 0 {
            return (URL(fileURLWithPath: job.destination), false)
        }
        return (try copyFromDaemon(job), true)
    }

    /// The inbox download `job`'s file, moved (or copied) into the session's download directory,
    /// where it stays for the caller of the async API.
    func takeInboxFile(of job: Job) throws(TransferError) -> URL {
        let (url, isCopy) = try inboxFile(of: job)
        if isCopy { return url }
        let target = try downloadTarget(for: job)
        if rename(url.path, target.path) == 0 { return target }
        do {
            try FileManager.default.copyItem(at: url, to: target)
        } catch {
            throw TransferError(code: .failed, message: "cannot copy the downloaded file to \(target.path): \(error.localizedDescription)")
        }
        return target
    }

    private func downloadTarget(for job: Job) throws(TransferError) -> URL {
        let directory = configuration.resolvedDownloadDirectory()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw TransferError(code: .failed, message: "cannot create the download directory \(directory.path): \(error.localizedDescription)")
        }
        let target = directory.appendingPathComponent(job.id + ".download")
        unlink(target.path)
        return target
    }

    private func copyFromDaemon(_ job: Job) throws(TransferError) -> URL {
        let input = try FileHandoff.fetch(job.id, controlSocket: requests.socketPath)
        defer { close(input) }
        let target = try downloadTarget(for: job)
        let output = open(target.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else {
            throw TransferError(code: .failed, message: "cannot create \(target.path): \(String(cString: strerror(errno)))")
        }
        defer { close(output) }
        let size = 1 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = read(input, buffer.baseAddress, size)
            if n < 0, errno == EINTR { continue }
            if n == 0 { return target }
            var written = 0
            while n > 0, written < n {
                let w = write(output, buffer.baseAddress.map { $0 + written }, n - written)
                if w < 0, errno == EINTR { continue }
                guard w > 0 else {
                    unlink(target.path)
                    throw TransferError(code: .failed, message: "cannot write \(target.path): \(String(cString: strerror(errno)))")
                }
                written += w
            }
            if n < 0 {
                unlink(target.path)
                throw TransferError(code: .failed, message: "cannot read job \(job.id)'s file from transferd: \(String(cString: strerror(errno)))")
            }
        }
    }
}
