import Foundation
import TransferProtocol

/// The decisions of one upload: what to send, which answers complete it, which are worth
/// another attempt. Pure: it is told about responses, body bytes and each request's end, and
/// returns actions; `UploadRunner` carries them out.
///
/// A plain PUT, POST or PATCH has no resume: every attempt sends the whole file from byte 0.
/// A resumable upload (tus 1.0 or the IETF draft, see `UploadAttempt+Resumable.swift`) creates
/// an upload resource once, then appends the file to it in segments of at most `segmentBytes`;
/// after an interruption it asks the server how much it holds and continues from there.
struct UploadAttempt {
    struct Settings {
        var url: URL
        var size: Int64
        /// Bytes of the response body kept.
        var bodyLimit: Int
        /// How to resume, and what earlier attempts learned (see `UploadPlan`).
        var resumable: ResumableMode = .off
        var protocolUsed: UploadProtocol?
        var resource: URL?
        /// Bytes in one append of a resumable upload: at most this much is sent twice after an interruption.
        var segmentBytes: Int64 = 8 << 20
        /// The job's Content-Type and the file's name, sent with a resumable upload's creation.
        var contentType: String?
        var fileName: String?
        /// The job's own method: a plain upload's, and the IETF creation's.
        var method: String = "PUT"
        /// `Content-Digest` of the whole file (RFC 9530).
        var contentDigest: String = ""
    }

    /// What the attempt needs of a response.
    struct Response: Equatable {
        var status: Int
        var location: String?
        var etag: String?
        var contentType: String?
        var retryAfter: String?
        /// `Upload-Offset`, `Upload-Complete` (IETF), and whether the server announced tus
        /// (`Tus-Resumable`) or the IETF protocol (`Upload-Draft-Interop-Version`, `Upload-Limit`).
        var uploadOffset: Int64? = nil
        var uploadComplete: Bool? = nil
        var announcesTus = false
        var announcesIETF = false
    }

    /// One request of the upload.
    struct Request: Equatable {
        enum Body: Equatable {
            case none
            /// The whole file, as FoundationNetworking reads it (a plain upload).
            case wholeFile
            /// These bytes of the file.
            case range(Range<Int64>)
        }
        var method: String
        var url: URL
        var headers: [String: String]
        var body: Body
    }

    enum Action: Equatable {
        /// Send this request.
        case send(Request)
        /// Read the response body.
        case acceptBody
        /// Stop reading the response.
        case cancelRequest
        /// Keep what was learned: the protocol, the resource, the bytes the server holds.
        case record(UploadProtocol, resource: URL?, offset: Int64)
        /// The server took it: the job completes with this answer.
        case complete(UploadResponse)
        /// Another attempt may succeed.
        case retryLater(TransferFailure)
        /// The job fails.
        case fail(JobError)
    }

    /// The request in flight, as far as deciding on its answer goes.
    enum Step: Equatable {
        /// OPTIONS: which resumable protocol the server speaks.
        case probe
        /// A plain upload of the whole file.
        case plain
        /// The request that creates the upload resource.
        case create
        /// HEAD: how many bytes the server holds.
        case offset
        /// An append of these bytes.
        case append(Range<Int64>)
    }

    let settings: Settings
    private(set) var response: Response?
    private(set) var body: [UInt8] = []
    private(set) var bodyTruncated = false
    /// Bytes of the file sent in this request (libcurl's count).
    var sent: Int64 = 0
    private(set) var step: Step = .plain
    /// What this upload knows: the protocol, the resource, and the bytes the server holds
    /// (`offsetKnown` when the server said so in this attempt).
    private(set) var protocolUsed: UploadProtocol?
    private(set) var resource: URL?
    private(set) var offset: Int64 = 0
    private(set) var offsetKnown = false
    /// Answers of 409 (offset mismatch) in a row: a server that keeps disagreeing is given up on.
    private(set) var conflicts = 0

    init(settings: Settings) {
        self.settings = settings
        switch settings.resumable {
        case .off: protocolUsed = .plain
        case .tus: protocolUsed = .tus
        case .ietf: protocolUsed = .ietf
        case .auto: protocolUsed = settings.protocolUsed
        }
        resource = protocolUsed == .plain ? nil : settings.resource
    }

    /// Bytes the server holds for certain: what a resumable upload keeps for its next attempt.
    var keptBytes: Int64 { protocolUsed == .plain ? 0 : offset }

    /// Bytes of the file the server has, counting this request's body as it goes.
    var progressBase: Int64 {
        if case .append(let range) = step { return range.lowerBound }
        return protocolUsed == .plain ? 0 : offset
    }

    /// Starts an attempt.
    mutating func proceed() -> [Action] {
        offsetKnown = false
        conflicts = 0
        return next()
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
        switch step {
        case .plain:
            if (200...299).contains(response.status) {
                // The server has the file: a connection lost while its answer's body arrived loses
                // only that body's end.
                return [.complete(result(response))]
            }
            return [refusal(response)]
        case .probe, .create, .offset, .append:
            return resumableAnswer(response)
        }
    }

    /// The next request: a fresh one's response and body are read anew.
    mutating func send(_ step: Step, _ request: Request) -> [Action] {
        self.step = step
        response = nil
        body = []
        bodyTruncated = false
        sent = 0
        return [.send(request)]
    }

    /// What a refused request means for the job.
    func refusal(_ response: Response) -> Action {
        let failure = FailureClassifier.uploadStatus(
            response.status, retryAfter: response.retryAfter, url: settings.url, size: settings.size, body: shortBody)
        return failure.retryable ? .retryLater(failure) : .fail(failure.error)
    }

    /// The answer as the job keeps it: the body as text when it is UTF-8, else base64.
    func result(_ response: Response, location: String? = nil) -> UploadResponse {
        var result = UploadResponse(
            status: response.status, location: response.location ?? location, etag: response.etag, contentType: response.contentType)
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

    // MARK: - Steps (used by the resumable part)

    mutating func learn(protocol found: UploadProtocol) { protocolUsed = found }
    mutating func learn(resource: URL?, offset: Int64) {
        self.resource = resource
        self.offset = offset
        offsetKnown = resource != nil
    }
    mutating func forgetOffset() { offsetKnown = false }
    mutating func countConflict() -> Int {
        conflicts += 1
        return conflicts
    }
    mutating func resetConflicts() { conflicts = 0 }
}
