import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif


extension EngineDelegate {
    /// Follows a redirect unless it downgrades https to http or exceeds the limit. Credentials
    /// given for one host are not sent to another.
    ///
    /// FoundationNetworking is told not to follow (its completion handler must be called before
    /// anything cancels the task, or it traps, so it cannot wait for a host check that may
    /// resolve a name): once the 3xx answer is done, `follow` checks the target against the host
    /// rules off the delegate queue and asks it with a new request.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard let context = state.withLock({ $0.byTask[task.taskIdentifier] }), let target = request.url else {
            completionHandler(nil)
            return
        }
        context.redirects += 1
        let from = response.url ?? context.request.url
        // Judged on the Location header itself: FoundationNetworking turns some targets (file:…)
        // into a request to the same server before this delegate sees them.
        if let location = response.value(forHTTPHeaderField: "Location"), let scheme = HTTPScheme.foreignScheme(ofLocation: location) {
            context.failure = .permanent(
                JobError(
                    code: "redirect",
                    message: "\(Redaction.url(from)) redirected to a \(scheme.prefix(20)): URL, which was refused: transferd speaks only http and https. "
                        + "Ask the server's owner for an http or https link"))
            completionHandler(nil)
            return
        }
        if context.redirects > configuration.maxRedirects {
            context.failure = .permanent(
                JobError(
                    code: "redirect",
                    message: "\(Redaction.url(context.request.url)) redirected more than \(configuration.maxRedirects) times "
                        + "(last to \(Redaction.url(target))); the server is probably caught in a redirect loop"))
            completionHandler(nil)
            return
        }
        if from.scheme?.lowercased() == "https", target.scheme?.lowercased() != "https" {
            context.failure = .permanent(
                JobError(
                    code: "redirect",
                    message: "\(Redaction.url(from)) redirected to \(Redaction.url(target)), which is not https; "
                        + "transferd does not downgrade a secure download. Submit the http URL yourself if you trust it"))
            completionHandler(nil)
            return
        }
        if target.host?.lowercased() != from.host?.lowercased() || target.port != from.port || target.scheme != from.scheme {
            // Authorization, Cookie and other credential-like headers stay with their origin.
            context.credentialsWithheld = true
        }
        context.pendingRedirect = target
        completionHandler(nil)
    }

    /// Checks a redirect's target against the host rules off the delegate queue (its name may
    /// need resolving), then asks it, unless the transfer was stopped meanwhile.
    func follow(_ context: TransferContext, to target: URL) {
        ioQueue.async {
            let refused = self.hostFailure(for: target)
            self.queue.addOperation {
                guard context.phase == .active else {
                    self.completeStop(context)
                    return
                }
                if let refused {
                    self.end(context, refused)
                    return
                }
                context.finalURL = target
                self.sendRequest(context, following: target)
            }
        }
    }
}
