import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TransferProtocol

extension FailureClassifier {
    /// A non-2xx answer to an upload: the download classes decide retries; 411 and 413 say what
    /// to do; a refusal's body (shortened) is part of the message, as servers explain there.
    static func uploadStatus(_ status: Int, retryAfter: String?, url: URL, size: Int64, body: String?) -> TransferFailure {
        let reason = HTTPURLResponse.localizedString(forStatusCode: status)
        let what = "the server answered \(status) (\(reason)) to the upload to \(Redaction.url(url))"
        let said = body.map { $0.isEmpty ? "" : ", saying: \($0)" } ?? ""
        if HTTPStatusClass.isTransient(status) {
            return .transient(JobError(code: .httpStatus, message: what + said, httpStatus: status), retryAfter: RetryAfter.seconds(retryAfter))
        }
        let fix: String
        switch status {
        case 411:
            fix = "the server wants a Content-Length, which transferd sends with PUT and POST: "
                + "upload with PUT or POST (-X) rather than PATCH, or check for a proxy in between that drops the header"
        case 413:
            fix = "the server does not take a body of \(ByteCountFormatting.string(size)) (\(size) bytes): "
                + "ask its administrator to raise its limit (nginx: client_max_body_size) or upload a smaller file"
        case 401, 403: fix = "check the credentials (an Authorization header) and that you may write there"
        case 404, 410: fix = "check the URL"
        case 405: fix = "the URL does not take this method: try another (-X PUT, POST or PATCH)"
        case 300...399: fix = "transferd does not follow redirects of uploads: upload to the URL it names (Location) instead"
        default: fix = "check the URL, the method and the request headers"
        }
        return .permanent(JobError(code: .httpStatus, message: "\(what)\(said): \(fix), then submit again", httpStatus: status))
    }
}
