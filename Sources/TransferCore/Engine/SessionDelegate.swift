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

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if uploads.context(forTask: task.taskIdentifier) != nil {
            uploads.completed(task, error: error)
            return
        }
        runner.completed(task, error: error)
    }
}
