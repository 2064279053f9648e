import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The upload socket, for the session: a file to upload is opened here, with this process's
/// rights, and handed over as a descriptor; a download without destination comes back as one.
enum FileHandoff {
    static func spool(_ file: URL, controlSocket: String) throws(TransferError) -> UploadHandoff.Reply {
        let path = file.path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else { throw TransferError(code: .refused, message: "cannot open \(path) to upload it: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let reply: UploadHandoff.Reply
        do {
            reply = try HandoffClient.send(fd, name: path, controlSocket: controlSocket)
        } catch {
            throw TransferError(error)
        }
        if let error = reply.error { throw TransferError(code: .refused, message: error.message) }
        return reply
    }

    /// The file of the download without destination `jobID`, as an open read-only descriptor.
    static func fetch(_ jobID: String, controlSocket: String) throws(TransferError) -> Int32 {
        do {
            return try HandoffClient.fetch(jobID, controlSocket: controlSocket)
        } catch {
            throw TransferError(error)
        }
    }
}

extension TransferError {
    init(_ error: HandoffError) {
        switch error {
        case .refused(let refusal): self.init(code: .refused, message: refusal.message)
        case .unavailable(let message): self.init(code: .daemonUnavailable, message: message)
        }
    }
}
