import Foundation
import TransferProtocol

/// Every URL an upload contacts passes the host rules, and the job's credentials go only to the
/// job URL's origin. The job URL is checked when each attempt starts; the resource a creation's
/// `Location` names (or the journal kept from an earlier run) is checked before the first request
/// to its origin in each attempt, so nothing, not even a HEAD, reaches a host the rules refuse.
extension UploadRunner {
    /// Sends `request` once its URL's origin passed the host rules in this attempt. Checking may
    /// resolve a name, so it runs on the I/O queue.
    func send(_ request: UploadAttempt.Request, _ context: UploadContext) {
        queues.assertOnDelegate()
        guard let origin = HTTPOrigin(request.url) else {
            perform([.fail(Self.hostError(request.url, "the URL has no host"))], context)
            return
        }
        if context.admittedOrigins.isEmpty, let jobOrigin = HTTPOrigin(context.request.url) {
            // `start` checked the job's URL before this attempt began.
            context.admittedOrigins.insert(jobOrigin)
        }
        if context.admittedOrigins.contains(origin) {
            sendAdmitted(request, context)
            return
        }
        queues.onIO {
            let verdict = self.hosts.verdict(for: request.url)
            self.queues.onDelegate {
                guard context.phase == .active else {
                    self.endInactive(context)
                    return
                }
                switch verdict {
                case .allowed:
                    context.admittedOrigins.insert(origin)
                    self.sendAdmitted(request, context)
                case .refused(let message):
                    self.perform([.fail(Self.hostError(request.url, message))], context)
                case .unresolved(let message):
                    self.perform([.retryLater(.transient(JobError(code: .dns, message: message)))], context)
                }
            }
        }
    }

    /// The failure of an upload whose request would go to a host the rules refuse.
    static func hostError(_ url: URL, _ message: String) -> JobError {
        JobError(code: .hostNotAllowed, message: "the upload was not sent to \(Redaction.url(url)): \(message)")
    }

    /// The job's `headers` as a request to `url` carries them: all of them to the job URL's
    /// origin, none of the credential-like ones (`Authorization`, `Cookie`, `Proxy-Authorization`,
    /// tokens, keys) anywhere else.
    static func credentials(_ headers: [String: String], for url: URL, jobURL: URL) -> [String: String] {
        HTTPOrigin.same(url, jobURL) ? headers : withoutCredentials(headers)
    }

    static func withoutCredentials(_ headers: [String: String]) -> [String: String] {
        headers.filter { !Redaction.isSecretName($0.key) }
    }
}
