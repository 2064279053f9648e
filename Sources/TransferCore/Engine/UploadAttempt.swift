import Foundation
import TransferProtocol

/// The decisions of one upload: what to send, which answers complete it, which are worth
/// another attempt. Pure: it is told about responses, body bytes and the request's end, and
/// returns actions; `UploadRunner` carries them out. A plain PUT, POST or PATCH has no resume:
/// every attempt sends the whole file from byte 0.
struct UploadAttempt {
    struct Settings {
        var url: URL
        var size: Int64
        /// Bytes of the response body kept.
        var bodyLimit: Int
    }

    /// What the attempt needs of a response.
    struct Response: Equatable {
        var status: Int
        var location: String?
        var etag: String?
        var contentType: String?
        var retryAfter: String?
    }

    enum Action: Equatable {
        /// Send the whole file.
        case send
        /// Read the response body.
        case acceptBody
        /// Stop reading the response.
        case cancelRequest
        /// The server took it: the job completes with this answer.
        case complete(UploadResponse)
        /// Another attempt may succeed.
        case retryLater(TransferFailure)
        /// The job fails.
        case fail(JobError)
    }

    let settings: Settings
    private(set) var response: Response?
    private(set) var body: [UInt8] = []
    private(set) var bodyTruncated = false
    /// Bytes of the file sent in this attempt (libcurl's count).
    var sent: Int64 = 0

    init(settings: Settings) {
        self.settings = settings
    }

    mutating func proceed() -> [Action] {
        response = nil
        body = []
        bodyTruncated = false
        sent = 0
        return [.send]
    }

    /// A response's headers; nil when it is not HTTP.
    mutating func respond(_ answer: Response?) -> [Action] {
        guard let answer else {
            return [.cancelRequest, .fail(JobError(code: .protocolViolation, message: "the server's answer to the upload is not HTTP"))]
        }
        response = answer
        return [.acceptBody]
    }

    /// Body bytes of the response: kept up to the limit.
    mutating func received(_ data: Data) {
        let room = settings.bodyLimit - body.count
        if data.count > room { bodyTruncated = true }
        if room > 0 { body.append(contentsOf: data.prefix(room)) }
    }

    /// The request ended, with `failure` when it did not get a whole answer.
    mutating func requestEnded(_ failure: TransferFailure?) -> [Action] {
        guard let response else {
            if let failure { return [failure.retryable ? .retryLater(failure) : .fail(failure.error)] }
            return [.retryLater(.transient(JobError(code: .protocolViolation, message: "the server ended the upload without an answer")))]
        }
        if (200...299).contains(response.status) {
            // The server has the file: a connection lost while its answer's body arrived loses
            // only that body's end.
            return [.complete(result(response))]
        }
        return [
            Self.decide(
                FailureClassifier.uploadStatus(
                    response.status, retryAfter: response.retryAfter, url: settings.url, size: settings.size, body: shortBody))
        ]
    }

    private static func decide(_ failure: TransferFailure) -> Action {
        failure.retryable ? .retryLater(failure) : .fail(failure.error)
    }

    /// The answer as the job keeps it: the body as text when it is UTF-8, else base64.
    private func result(_ response: Response) -> UploadResponse {
        var result = UploadResponse(status: response.status, location: response.location, etag: response.etag, contentType: response.contentType)
        guard !body.isEmpty else { return result }
        if let text = String(validating: body, as: UTF8.self) {
            result.body = text
            result.bodyEncoding = "utf8"
        } else {
            result.body = Data(body).base64EncodedString()
            result.bodyEncoding = "base64"
        }
        result.bodyTruncated = bodyTruncated ? true : nil
        return result
    }

    /// The start of a refusal's body, on one line, for an error message.
    var shortBody: String? {
        guard !body.isEmpty else { return nil }
        let text = String(decoding: body.prefix(300), as: UTF8.self)
        // One line: control characters (line breaks included) become spaces, runs of spaces one.
        let line = text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7f ? " " : String($0) }.joined()
            .split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return body.count > 300 || bodyTruncated ? line + "…" : line
    }
}
