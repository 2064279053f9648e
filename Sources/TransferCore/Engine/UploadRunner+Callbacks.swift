import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TransferProtocol

extension UploadRunner {
    // MARK: - URLSession's callbacks (delegate queue), forwarded by SessionDelegate

    func received(_ response: URLResponse, context: UploadContext) -> URLSession.ResponseDisposition {
        queues.assertOnDelegate()
        let answer = (response as? HTTPURLResponse).map { http in
            UploadAttempt.Response(
                status: http.statusCode, location: http.value(forHTTPHeaderField: "Location"), etag: http.value(forHTTPHeaderField: "ETag"),
                contentType: http.value(forHTTPHeaderField: "Content-Type"), retryAfter: http.value(forHTTPHeaderField: "Retry-After"))
        }
        return perform(context.attempt.respond(answer), context)
    }

    func received(_ data: Data, context: UploadContext) {
        context.attempt.received(data)
    }

    func sent(_ total: Int64, context: UploadContext) {
        context.sent.store(total, ordering: .relaxed)
    }

    func completed(_ task: URLSessionTask, error: (any Error)?) {
        queues.assertOnDelegate()
        guard let context = unregister(task: task.taskIdentifier) else { return }
        context.control.withLock { $0.task = nil }
        switch context.phase {
        case .cancelling, .stopping:
            end(context, .stopped(jobID: context.request.jobID, bytes: 0))
        case .active:
            let failure = error.map { FailureClassifier.network($0, url: context.request.url, idleTimeout: context.request.limits.idleTimeout) }
            perform(context.attempt.requestEnded(failure), context)
        }
    }
}
