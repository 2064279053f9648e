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
        return feed(.response((response as? HTTPURLResponse).map(Self.answer), clock(context)), context)
    }

    /// What the attempt reads of a response's header fields.
    static func answer(_ http: HTTPURLResponse) -> UploadAttempt.Response {
        let field = { (name: String) in http.value(forHTTPHeaderField: name) }
        var answer = UploadAttempt.Response(
            status: http.statusCode, location: field("Location"), etag: field("ETag"), contentType: field("Content-Type"),
            retryAfter: field("Retry-After"))
        answer.uploadOffset = field("Upload-Offset").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
        // A structured-field boolean (RFC 8941): ?1 or ?0.
        answer.uploadComplete = field("Upload-Complete").flatMap { value in
            switch value.trimmingCharacters(in: .whitespaces) {
            case "?1": return true
            case "?0": return false
            default: return nil
            }
        }
        answer.announcesTus = field("Tus-Resumable") != nil || field("Tus-Version") != nil
        answer.announcesIETF = field("Upload-Draft-Interop-Version") != nil || field("Upload-Limit") != nil
        return answer
    }

    func received(_ data: Data, context: UploadContext) {
        feed(.body(data), context)
    }

    func sent(_ total: Int64, context: UploadContext) {
        context.sent.store(total, ordering: .relaxed)
    }

    /// `context` is the upload the task belonged to, which `SessionDelegate` took it out of `EngineTasks` for.
    func completed(_ task: URLSessionTask, error: (any Error)?, _ context: UploadContext) {
        queues.assertOnDelegate()
        if context.task === task { context.task = nil }
        let failure = error.map { FailureClassifier.network($0, url: context.request.url, idleTimeout: context.request.limits.idleTimeout) }
        feed(.requestEnded(failure, clock(context)), context)
    }
}
