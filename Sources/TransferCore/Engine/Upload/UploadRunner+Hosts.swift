import Foundation
import TransferProtocol

/// Every URL an upload contacts passes the host rules, and the job's credentials go only to the
/// job URL's origin. The job URL is checked when each attempt starts; the resource a creation's
/// `Location` names (or the journal kept from an earlier run) is checked before the first request
/// to its origin in each attempt, so nothing, not even a HEAD, reaches a host the rules refuse.
extension UploadRunner {
    /// Asks the host rules about `url` for the machine, which holds the request until the verdict
    /// (`UploadMachine.admit`). Checking may resolve a name, so it runs on the I/O queue.
    func checkHost(_ url: URL, _ context: UploadContext) {
        queues.onIO {
            let verdict = self.hosts.verdict(for: url)
            self.queues.onDelegate { self.feed(.hostChecked(verdict, self.clock(context)), context) }
        }
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
