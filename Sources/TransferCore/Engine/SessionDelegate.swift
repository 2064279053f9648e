import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's delegate: forwards each callback to the runner of its task (downloads or
/// uploads), on the delegate queue.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    let runner: TransferRunner
    let uploads: UploadRunner

    init(runner: TransferRunner, uploads: UploadRunner) {
        self.runner = runner
        self.uploads = uploads
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let upload = uploads.context(forTask: dataTask.taskIdentifier) {
            completionHandler(uploads.received(response, context: upload))
            return
        }
        completionHandler(runner.received(response, task: dataTask))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let upload = uploads.context(forTask: dataTask.taskIdentifier) {
            uploads.received(data, context: upload)
            return
        }
        runner.received(data, task: dataTask)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        if let upload = uploads.context(forTask: task.taskIdentifier) { uploads.sent(totalBytesSent, context: upload) }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        runner.redirected(response, to: request, task: task)
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
        if uploads.context(forTask: task.taskIdentifier) != nil {
            uploads.completed(task, error: error)
            return
        }
        runner.completed(task, error: error)
    }
}
