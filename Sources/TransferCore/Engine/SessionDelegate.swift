import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's delegate: finds the transfer of each callback's task with one lookup in
/// `EngineTasks` and forwards the callback to its runner (downloads or uploads), on the delegate
/// queue. A task no longer in the table (its transfer ended) is cancelled or ignored.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let runner: DownloadRunner
    let uploads: UploadRunner
    let tasks: EngineTasks

    init(runner: DownloadRunner, uploads: UploadRunner, tasks: EngineTasks) {
        self.runner = runner
        self.uploads = uploads
        self.tasks = tasks
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        switch tasks.owner(of: dataTask.taskIdentifier) {
        case .download(let context): completionHandler(runner.received(response, task: dataTask, context))
        case .upload(let context): completionHandler(uploads.received(response, context: context))
        case nil: completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        switch tasks.owner(of: dataTask.taskIdentifier) {
        case .download(let context): runner.received(data, task: dataTask, context)
        case .upload(let context): uploads.received(data, context: context)
        case nil: break
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        if case .upload(let context) = tasks.owner(of: task.taskIdentifier) { uploads.sent(totalBytesSent, context: context) }
    }

    /// The body of a plain upload's request (one that names its length, `BodyLength`), asked for on
    /// FoundationNetworking's queue each time the request is sent. Every other task is asked too
    /// (a request without a body, or libcurl rewinding a `Data` body) and gets nil, as without this
    /// method: a stream there would give a GET a body, or stop FoundationNetworking.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        guard BodyLength.isNamed(in: task.originalRequest) else { return completionHandler(nil) }
        guard case .upload(let context) = tasks.owner(of: task.taskIdentifier) else {
            // Ended already: an empty body, not none, which FoundationNetworking cannot read from.
            return completionHandler(InputStream(data: Data()))
        }
        // Read on FoundationNetworking's queue, not the delegate queue: the plan never changes.
        completionHandler(BodyLength.stream(ofFileAt: context.plan.spoolPath))
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        // Redirects are followed by the transfer itself, after the host rules (an upload's end with the 3xx).
        if case .download(let context) = tasks.owner(of: task.taskIdentifier) { runner.redirected(response, to: request, task: task, context) }
        completionHandler(nil)
    }

    /// A login challenge (`401` or a proxy's `407` with `WWW-Authenticate`/`Proxy-Authenticate`) is
    /// answered at most once, with the credentials of the request's URL; otherwise it is refused, so
    /// that the task ends with the challenge's answer instead of waiting for ever for credentials
    /// that nobody will give.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let answer = LoginChallenge.answer(
            method: challenge.protectionSpace.authenticationMethod, previousFailures: challenge.previousFailureCount,
            url: task.currentRequest?.url ?? task.originalRequest?.url)
        switch answer {
        case .credential(let user, let password):
            completionHandler(.useCredential, URLCredential(user: user, password: password, persistence: .forSession))
        case .refuse:
            completionHandler(.rejectProtectionSpace, nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        Trust.forget(task.originalRequest)
        switch tasks.unregister(task.taskIdentifier) {
        case .download(let context): runner.completed(task, error: error, context)
        case .upload(let context): uploads.completed(task, error: error, context)
        case nil: break
        }
    }
}
