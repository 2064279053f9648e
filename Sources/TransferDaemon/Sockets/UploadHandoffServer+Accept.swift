import CDescriptorPassing
import Foundation
import Logging
import Synchronization
import TransferCore
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Accepting hand-offs: every connection is accepted at once and either admitted (a thread of its
/// own, within `maxOpenHandoffs` and the user's `max_upload_handoffs_per_user`) or answered with
/// the reason and closed. Nothing waits in the listen backlog behind another user's idle
/// connections, and an admitted connection that passes nothing is closed after
/// `upload_handoff_timeout_seconds`.
extension UploadHandoffServer {
    func acceptLoop() {
        while true {
            let client = cdescriptorpassing_accept(fd)
            let code = errno
            if stopping.load(ordering: .sequentiallyConsistent) {
                if client >= 0 { close(client) }
                return
            }
            guard client >= 0 else {
                if code == EINTR || code == ECONNABORTED { continue }
                guard AcceptFailureEpisode.isResourceShortage(code) else {
                    logger.error("the upload socket stopped accepting", metadata: ["socket": "\(path)", "error": "\(String(cString: strerror(code)))"])
                    return
                }
                // Out of descriptors: keep the listener and try again once some are closed.
                failures.failed(errno: code)
                usleep(100_000)
                continue
            }
            failures.accepted()
            admit(client)
        }
    }

    /// Serves `client` on a thread of its own when the limits allow, else answers why not.
    private func admit(_ client: Int32) {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(client, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else {
            close(client)
            return
        }
        let settings = configuration.current
        let uid = credentials.uid
        switch handoffs.admit(user: uid, limit: Self.maxOpenHandoffs, perUser: settings.maxUploadHandoffsPerUser) {
        case .admitted:
            let timeout = settings.uploadHandoffTimeoutSeconds
            let credentials = credentials
            let started = CheckedThread.start { [self] in
                defer { handoffs.release(user: uid) }
                serve(client, credentials: credentials, timeoutSeconds: timeout)
            }
            if !started {
                handoffs.release(user: uid)
                refuse(client, "transferd cannot start a thread for this hand-off (out of threads or memory; see TasksMax in its unit): try again in a few seconds")
            }
        case .userFull(let limit):
            refuse(
                client,
                "user \(uid) already has \(limit) hand-offs of files to upload in progress (max_upload_handoffs_per_user): "
                    + "wait for them to finish, or raise the limit in the daemon's configuration")
        case .full(let limit):
            refuse(client, "transferd already takes \(limit) files to upload at once: try again in a few seconds")
        }
    }

    /// Answers a connection beyond a limit and closes it, without waiting for the client: a
    /// client that does not read never holds up the accept loop.
    private func refuse(_ client: Int32, _ message: String) {
        logger.debug("upload hand-off refused", metadata: ["reason": "\(message)"])
        Self.answer(client, UploadHandoff.Reply(error: RPCError(.limitExceeded, message)), flags: Int32(MSG_DONTWAIT))
        close(client)
    }

    /// Writes `reply` as one JSON line (what `transferctl` reads back).
    static func answer(_ client: Int32, _ reply: UploadHandoff.Reply, flags: Int32) {
        guard var line = try? WireCoding.encode(reply) else { return }
        line.append(UInt8(ascii: "\n"))
        _ = line.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | flags) }
    }

    /// What a client that passed nothing in time is told.
    static func timedOut(seconds: Int) -> String {
        "nothing came over the upload socket within \(seconds) s of connecting (upload_handoff_timeout_seconds), so transferd closed "
            + "the connection: send the open file with SCM_RIGHTS as soon as you connect, as transferctl upload does"
    }

    /// Whether this process has no descriptor free (what `dup` of `client` says).
    static func outOfDescriptors(_ client: Int32) -> Bool {
        let probe = dup(client)
        guard probe < 0 else {
            close(probe)
            return false
        }
        return errno == EMFILE || errno == ENFILE
    }

    static let noDescriptorFree =
        "transferd had no descriptor free to take the file (its open-file limit is reached): try again shortly; "
        + "if it persists, raise LimitNOFILE= in its unit or lower max_connections and metrics_max_connections"
}
