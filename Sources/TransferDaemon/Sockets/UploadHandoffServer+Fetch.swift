import CDescriptorPassing
import Foundation
import Logging
import TransferCore
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The other way over the upload socket: a submitter asks for the file of its download without
/// destination (`{"fetch":"ID"}`, no descriptor) and gets it as an open, read-only descriptor
/// beside a one-line answer. The daemon's inbox is never readable by path, so this works for the
/// system service's users as for the daemon's own.
extension UploadHandoffServer {
    struct FetchRequest: Decodable {
        var fetch: String
    }

    /// Answers a fetch of `line` for the peer `uid`.
    func serveFetch(_ client: Int32, line: [UInt8], uid: UInt32) {
        guard let request = try? WireCoding.decoder().decode(FetchRequest.self, from: Data(line.prefix { $0 != UInt8(ascii: "\n") })) else {
            Self.answer(client, UploadHandoff.Reply(error: RPCError(.invalidParams, "a request on the upload socket is {\"fetch\":\"JOB ID\"}, or a file descriptor to upload")), flags: 0)
            return
        }
        let id = request.fetch
        guard Limits.isValidName(id) else {
            Self.answer(client, UploadHandoff.Reply(error: RPCError(.invalidParams, "fetch names no job: give the id of your download without destination")), flags: 0)
            return
        }
        let path = Inbox.beside(spool: spool.directory).path(owner: uid, id: id)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)
        guard fd >= 0 else {
            let message = errno == ENOENT
                ? "job \(id) has no file in the inbox: it is not one of your downloads without destination, has not completed, or its end was acknowledged (the file is deleted then)"
                : "cannot open the inbox file of job \(id): \(String(cString: strerror(errno)))"
            Self.answer(client, UploadHandoff.Reply(error: RPCError(.noSuchJob, message)), flags: 0)
            return
        }
        defer { close(fd) }
        var info = stat()
        _ = fstat(fd, &info)
        guard var reply = try? WireCoding.encode(UploadHandoff.Reply(size: Int64(info.st_size))) else { return }
        reply.append(UInt8(ascii: "\n"))
        _ = reply.withUnsafeBytes { cdescriptorpassing_send(client, $0.baseAddress, $0.count, fd) }
        logger.debug("inbox file handed over", metadata: ["uid": "\(uid)", "job": "\(id)"])
    }
}
