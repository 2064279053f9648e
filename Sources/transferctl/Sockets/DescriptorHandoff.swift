import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Hands a file transferctl opened (with the user's rights) to the daemon over its upload
/// socket, as a descriptor (`SCM_RIGHTS`), and reads back the name of the daemon's synced copy.
enum DescriptorHandoff {
    /// Opens `path` for reading; a file the user cannot read is refused here, naming it.
    static func open(_ path: String) throws(TransferCtlError) -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .localFile("cannot open \(path) to upload it: \(reason); nothing was sent to transferd")
        }
        return fd
    }

    /// Sends `fd` (named `name` in the daemon's messages) to the upload socket of the daemon
    /// whose control socket is `controlSocket`; returns the daemon's answer.
    static func send(_ fd: Int32, name: String, controlSocket: String) throws(TransferCtlError) -> UploadHandoff.Reply {
        do {
            return try HandoffClient.send(fd, name: name, controlSocket: controlSocket)
        } catch {
            switch error {
            case .refused(let refusal): throw .refused(refusal)
            case .unavailable(let message): throw .connectionBroken(message)
            }
        }
    }
}
