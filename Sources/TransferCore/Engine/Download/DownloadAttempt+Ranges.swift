import Foundation
import TransferProtocol

extension DownloadAttempt {
    /// How a `206` answer's range fits the file: the resume table's rows for a ranged answer,
    /// shared by the attempt's own requests (`respond`) and the helper connections' (`helperAnswerFits`).
    enum RangeFit: Equatable, Sendable {
        case fits(ContentRange)
        /// No valid `Content-Range`, or one that starts elsewhere than asked: ranges cannot be trusted.
        case misplaced
        /// Another total size, or another validator than `If-Range` asked for: another version.
        case otherVersion
        /// No validator on either side and not the whole file: later ranges could mix versions.
        case unvalidated
    }

    /// Whether the current request may be cancelled and continued later with a ranged request
    /// from the offset (to let a backlog drain): only after a 206 with a validator is that safe.
    var continuesWithRange: Bool { status == 206 && validator != nil }

    /// How a `206` answer to a range from `start` fits what the attempt knows of the file.
    func rangeFit(_ response: Response, from start: Int64) -> RangeFit {
        guard let range = ContentRange(response.contentRange), range.start == start else { return .misplaced }
        guard totalBytes == nil || range.total == nil || range.total == totalBytes else { return .otherVersion }
        // The server ignored If-Range and sent a range of a different version.
        if start > 0, let asked = validator, response.validator != asked { return .otherVersion }
        if response.validator == nil, validator == nil, range.end + 1 < (range.total ?? Int64.max) { return .unvalidated }
        return .fits(range)
    }

    /// Whether a helper connection's answer brings bytes of the file: a `206` that fits it
    /// (`rangeFit`) with exactly the range `asked`, of a file of `total` bytes, with the attempt's
    /// validator and content coding, and no conflicting `Content-Length`.
    func helperAnswerFits(_ response: Response, asked: ClosedRange<Int64>, total: Int64) -> Bool {
        guard response.status == 206, let validator, response.validator == validator,
            case .fits(let range) = rangeFit(response, from: asked.lowerBound),
            range.end == asked.upperBound, range.total == total,
            ContentCoding.named(response.contentEncoding) == contentEncoding
        else { return false }
        return response.contentLength.map { ContentLength.conflict($0) == nil } ?? true
    }
}
