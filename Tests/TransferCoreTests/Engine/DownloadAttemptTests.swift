import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// The attempt's decisions, one input at a time: the rows of the resume table, the endings of a
/// request and their precedence, redirects, and which failures are retried.
@Suite("Download attempt: resume table, endings, redirects, retry classes")
struct DownloadAttemptTests {
    static let url = URL(string: "http://example.test/file")!
    static let segment: Int64 = 100

    /// An attempt whose first request is out.
    static func started(
        offset: Int64 = 0, total: Int64? = nil, validator: String? = nil, expectedSize: Int64? = nil, reserve: Int64 = 0
    ) -> (DownloadAttempt, [DownloadAttempt.Action]) {
        var attempt = DownloadAttempt(
            settings: .init(url: url, expectedSize: expectedSize, diskReserveBytes: reserve, maxRedirects: 2),
            offset: offset, totalBytes: total, validator: validator, segmentBytes: segment)
        let actions = attempt.proceed()
        return (attempt, actions)
    }

    static func plan(_ actions: [DownloadAttempt.Action]) -> DownloadAttempt.RequestPlan? {
        for case .send(let plan) in actions { return plan }
        return nil
    }

    static func failure(_ actions: [DownloadAttempt.Action]) -> (code: JobErrorCode, retried: Bool)? {
        for action in actions {
            switch action {
            case .fail(let error): return (error.code, false)
            case .retryLater(let failure): return (failure.error.code, true)
            default: continue
            }
        }
        return nil
    }

    // MARK: - Requests

    @Test func theFirstRequestAsksForOneSegmentFromTheOffsetWithIfRangeOnlyPastZero() {
        let (_, fresh) = Self.started()
        #expect(Self.plan(fresh) == .init(url: Self.url, range: 0...99, ifRange: nil, withholdCredentials: false))
        let (_, resumed) = Self.started(offset: 50, total: 120, validator: "\"v1\"")
        #expect(Self.plan(resumed) == .init(url: Self.url, range: 50...119, ifRange: "\"v1\"", withholdCredentials: false))
    }

    @Test func requestsStopWhereOtherConnectionsFetchAndGoOnPastWhatTheyFetched() {
        var (attempt, _) = Self.started(total: 500, validator: "\"v1\"")
        attempt.limitRequests(to: 60)
        _ = attempt.respond(.init(status: 206, contentRange: "bytes 0-99/500", validator: "\"v1\""))
        attempt.wrote(100)
        #expect(attempt.requestEnded(nil) == [.nextSegment])
        // Bytes 100..<300 were fetched by a helper and taken into the digest: the next request starts after them.
        attempt.skipped(to: 300)
        attempt.limitRequests(to: 350)
        #expect(Self.plan(attempt.proceed()) == .init(url: Self.url, range: 300...349, ifRange: "\"v1\"", withholdCredentials: false))
        // A limit behind the offset bounds nothing.
        var (other, _) = Self.started(offset: 50, total: 500, validator: "\"v1\"")
        other.limitRequests(to: 50)
        #expect(Self.plan(other.proceed())?.range == 50...149)
    }

    @Test func aPartialFileThatHoldsEverythingLandsWithoutARequest() {
        let (attempt, actions) = Self.started(offset: 120, total: 120, validator: "\"v1\"")
        #expect(actions == [.land])
        #expect(attempt.isOver)
    }

    @Test func aNonHTTPURLNeverBecomesARequest() {
        var attempt = DownloadAttempt(
            settings: .init(url: URL(string: "ftp://example.test/f")!), offset: 0, totalBytes: nil, validator: nil, segmentBytes: 10)
        #expect(Self.failure(attempt.proceed())! == (.unsupportedURL, false))
    }

    // MARK: - The resume table

    @Test func row200OnAnEmptyFileIsTheWholeFile() {
        var (attempt, _) = Self.started()
        let actions = attempt.respond(.init(status: 200, expectedContentLength: 500, validator: "\"v1\""))
        // The report says the server does not take ranges: the job's status shows one connection.
        #expect(actions == [.report(.init(totalBytes: 500, validator: "\"v1\"", startOffset: 0, finalURL: nil, rangesRefused: true)), .acceptBody])
        #expect(attempt.acceptsBody && !attempt.rangesUsable)
    }

    @Test func row200ToAResumeStartsOverAndNeverAppends() {
        var (attempt, _) = Self.started(offset: 40, total: 500, validator: "\"v1\"")
        let actions = attempt.respond(.init(status: 200, expectedContentLength: 500, validator: "\"v2\""))
        #expect(actions.first == .startOver(reason: "the server answered 200 to a resume"))
        #expect(actions.last == .acceptBody)
        #expect(attempt.offset == 0)
    }

    @Test func row206ThatContinuesTheFileIsAppended() {
        var (attempt, _) = Self.started(offset: 50, total: 500, validator: "\"v1\"")
        let actions = attempt.respond(.init(status: 206, contentRange: "bytes 50-149/500", validator: "\"v1\""))
        #expect(actions == [.report(.init(totalBytes: 500, validator: "\"v1\"", startOffset: 50, finalURL: nil)), .acceptBody])
        attempt.wrote(100)
        #expect(attempt.requestEnded(nil) == [.nextSegment])
        #expect(Self.plan(attempt.proceed())?.range == 150...249)
        // Later segments of the same version are not reported again.
        #expect(attempt.respond(.init(status: 206, contentRange: "bytes 150-249/500", validator: "\"v1\"")) == [.acceptBody])
    }

    @Test func row206ThatStartsElsewhereOrHasNoRangeStartsOverWithOnePlainRequest() {
        for contentRange in ["bytes 60-149/500", "garbage", nil] {
            var (attempt, _) = Self.started(offset: 50, total: 500, validator: "\"v1\"")
            #expect(attempt.respond(.init(status: 206, contentRange: contentRange, validator: "\"v1\"")) == [.cancelRequest])
            let next = attempt.requestEnded(nil)
            #expect(next.first == .startOver(reason: "the server's ranged answer did not continue the file"))
            #expect(Self.plan(next)?.range == nil)
            #expect(attempt.offset == 0)
        }
    }

    @Test func row206WithAnotherSizeOrValidatorIsAnotherVersion() {
        var (sized, _) = Self.started(offset: 50, total: 500, validator: "\"v1\"")
        #expect(sized.respond(.init(status: 206, contentRange: "bytes 50-149/900", validator: "\"v1\"")) == [.cancelRequest])
        #expect(sized.ending == .restartFromZero)
        var (changed, _) = Self.started(offset: 50, total: 500, validator: "\"v1\"")
        #expect(changed.respond(.init(status: 206, contentRange: "bytes 50-149/500", validator: "\"v2\"")) == [.cancelRequest])
        #expect(changed.ending == .restartFromZero)
        // Ranges stay in use: the server honours them, the file changed.
        _ = changed.requestEnded(nil)
        #expect(changed.rangesUsable)
    }

    @Test func row206WithoutAnyValidatorAndNotTheWholeFileIsFetchedInOnePiece() {
        var (attempt, _) = Self.started()
        #expect(attempt.respond(.init(status: 206, contentRange: "bytes 0-99/500")) == [.cancelRequest])
        #expect(Self.plan(attempt.requestEnded(nil))?.range == nil)
        // The whole file in one 206 needs no validator.
        var (whole, _) = Self.started()
        #expect(whole.respond(.init(status: 206, contentRange: "bytes 0-49/50")).last == .acceptBody)
    }

    @Test func row416WhoseTotalIsTheOffsetLandsWithoutABody() {
        var (attempt, _) = Self.started(offset: 500, validator: "\"v1\"")
        #expect(attempt.respond(.init(status: 416, contentRange: "bytes */500", validator: "\"v1\"")) == [.cancelRequest])
        #expect(attempt.requestEnded(FailureClassifier.network(URLError(.cancelled), url: Self.url, idleTimeout: 60)) == [.land])
    }

    @Test func row416OtherwiseStartsOverPlainWhenTheRangeStartedAtZero() {
        var (other, _) = Self.started(offset: 40, validator: "\"v1\"")
        _ = other.respond(.init(status: 416, contentRange: "bytes */500", validator: "\"v1\""))
        #expect(Self.plan(other.requestEnded(nil))?.range == 0...99)
        var (empty, _) = Self.started()
        _ = empty.respond(.init(status: 416, contentRange: "bytes */9"))
        #expect(Self.plan(empty.requestEnded(nil))?.range == nil)
        // A 416 for an empty representation at offset 0: the empty file lands.
        var (zero, _) = Self.started()
        _ = zero.respond(.init(status: 416, contentRange: "bytes */0"))
        #expect(zero.requestEnded(nil) == [.land])
    }

    @Test func interimAnswersWaitForTheFinalOne() {
        var (attempt, _) = Self.started()
        #expect(attempt.respond(.init(status: 103)) == [.acceptBody])
        #expect(attempt.status == 0 && !attempt.acceptsBody)
        #expect(attempt.respond(.init(status: 200, expectedContentLength: 5)).last == .acceptBody)
    }

    @Test func restartsAreBoundedPerAttempt() {
        var (attempt, _) = Self.started(offset: 10, total: 500, validator: "\"v1\"")
        var last: [DownloadAttempt.Action] = []
        for _ in 0..<4 {
            _ = attempt.respond(.init(status: 206, contentRange: "bytes 99-100/500", validator: "\"v1\""))
            last = attempt.requestEnded(nil)
        }
        #expect(Self.failure(last)! == (.protocolViolation, false))
    }

    // MARK: - Refused answers

    @Test func answersThatCannotBeTrustedFailWithoutRetry() {
        let cases: [(DownloadAttempt.Response?, JobErrorCode)] = [
            (nil, .protocolViolation),
            (.init(status: 200, contentLength: "12, 5"), .protocolViolation),
            (.init(status: 200, expectedContentLength: 9), .sizeMismatch),
        ]
        for (response, code) in cases {
            var (attempt, _) = Self.started(expectedSize: 10)
            #expect(attempt.respond(response) == [.cancelRequest])
            #expect(!attempt.acceptsBody)
            #expect(Self.failure(attempt.requestEnded(nil))! == (code, false))
        }
    }

    /// A coding sent although `identity` was asked for: the body is kept as sent, and reported.
    @Test func aContentCodingIsKeptAsSent() {
        var (attempt, _) = Self.started(expectedSize: nil)
        let actions = attempt.respond(.init(status: 200, contentEncoding: " GZip"))
        #expect(attempt.acceptsBody)
        #expect(attempt.contentEncoding == "gzip")
        #expect(actions.contains { if case .report(let report) = $0 { return report.contentEncoding == "gzip" } else { return false } })
        var (identity, _) = Self.started(expectedSize: nil)
        _ = identity.respond(.init(status: 200, contentEncoding: "identity"))
        #expect(identity.contentEncoding == nil)
    }

    @Test func tooLittleFreeSpaceWaitsAndRetries() {
        var (attempt, _) = Self.started(reserve: 100)
        _ = attempt.respond(.init(status: 200, expectedContentLength: 1_000, freeBytes: 1_050, directory: "/d"))
        #expect(Self.failure(attempt.requestEnded(nil))! == (.diskFull, true))
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 520, 524])
    func transientStatusesAreRetried(status: Int) {
        var (attempt, _) = Self.started()
        _ = attempt.respond(.init(status: status, retryAfter: "7"))
        guard case .retryLater(let failure)? = attempt.requestEnded(nil).first else { return #expect(Bool(false)) }
        #expect(failure.error.httpStatus == status && failure.retryAfter == 7)
    }

    @Test(arguments: [301, 400, 401, 403, 404, 410, 451, 501])
    func otherStatusesFailTheJob(status: Int) {
        var (attempt, _) = Self.started()
        _ = attempt.respond(.init(status: status))
        #expect(Self.failure(attempt.requestEnded(nil))! == (.httpStatus, false))
    }

    // MARK: - How a request ends

    @Test func aBodyShorterThanAnnouncedIsRetriedFromWhereItStopped() {
        var (attempt, _) = Self.started()
        _ = attempt.respond(.init(status: 200, expectedContentLength: 500))
        attempt.wrote(120)
        guard case .retryLater(let failure)? = attempt.requestEnded(nil).first else { return #expect(Bool(false)) }
        #expect(failure.error.code == .connectionLost && attempt.offset == 120)
    }

    @Test func aNetworkErrorNamesHowFarTheTransferGot() {
        var (attempt, _) = Self.started()
        _ = attempt.respond(.init(status: 200, expectedContentLength: 500))
        attempt.wrote(7)
        let lost = FailureClassifier.network(URLError(.networkConnectionLost), url: Self.url, idleTimeout: 60)
        guard case .retryLater(let failure)? = attempt.requestEnded(lost).first else { return #expect(Bool(false)) }
        #expect(failure.error.message.hasSuffix("(after 7 of 500 bytes)"))
    }

    @Test func aBodyWithoutALengthLandsWhenItEnds() {
        var (attempt, _) = Self.started()
        _ = attempt.respond(.init(status: 200))
        attempt.wrote(42)
        #expect(attempt.requestEnded(nil) == [.land])
    }

    @Test func aFailureFoundElsewhereCancelsTheRequestAndEndsIt() {
        var (attempt, _) = Self.started()
        _ = attempt.respond(.init(status: 200, expectedContentLength: 500))
        let slow = TransferFailure.transient(JobError(code: .tooSlow, message: "slow"))
        #expect(attempt.failed(slow) == [.cancelRequest])
        #expect(!attempt.acceptsBody)
        #expect(Self.failure(attempt.requestEnded(nil))! == (.tooSlow, true))
        #expect(attempt.requestEnded(nil).isEmpty)
    }

    @Test func aFailureBetweenSegmentsStopsTheNextRequest() {
        var (attempt, _) = Self.started(validator: "\"v\"")
        _ = attempt.respond(.init(status: 206, contentRange: "bytes 0-99/500", validator: "\"v\""))
        attempt.wrote(100)
        #expect(attempt.requestEnded(nil) == [.nextSegment])
        #expect(attempt.failed(.permanent(JobError(code: .timeLimit, message: "late"))).isEmpty)
        #expect(Self.failure(attempt.proceed())! == (.timeLimit, false))
    }

    @Test func aFailureReplacesARestartButNotALanding() {
        var (restarting, _) = Self.started(offset: 50, total: 500, validator: "\"v1\"")
        _ = restarting.respond(.init(status: 206, contentRange: "bytes 9-9/500", validator: "\"v1\""))
        _ = restarting.failed(.permanent(JobError(code: .timeLimit, message: "late")))
        #expect(Self.failure(restarting.requestEnded(nil))! == (.timeLimit, false))
        var (complete, _) = Self.started(offset: 500, validator: "\"v1\"")
        _ = complete.respond(.init(status: 416, contentRange: "bytes */500"))
        _ = complete.failed(.permanent(JobError(code: .timeLimit, message: "late")))
        #expect(complete.requestEnded(nil) == [.land])
    }

    @Test func aStartOverThatFailsEndsTheAttemptOrCancelsTheAnswer() {
        var (answering, _) = Self.started(offset: 40, total: 500, validator: "\"v1\"")
        _ = answering.respond(.init(status: 200, expectedContentLength: 500))
        let full = TransferFailure.transient(JobError(code: .diskFull, message: "full"))
        #expect(answering.startOverFailed(full, answering: true) == [.cancelRequest])
        #expect(Self.failure(answering.requestEnded(nil))! == (.diskFull, true))
        var (restarting, _) = Self.started(offset: 40, total: 500, validator: "\"v1\"")
        _ = restarting.respond(.init(status: 206, contentRange: "bytes 1-2/500", validator: "\"v1\""))
        _ = restarting.requestEnded(nil)
        #expect(Self.failure(restarting.startOverFailed(full, answering: false))! == (.diskFull, true))
    }

    @Test func aBodyOfAnotherSizeThanAnnouncedNeverLands() {
        // The partial file holds more than the recorded size: it cannot be the announced file.
        let (_, actions) = Self.started(offset: 120, total: 100, validator: "\"v\"")
        #expect(Self.failure(actions)! == (.sizeMismatch, false))
        var (exact, _) = Self.started()
        _ = exact.respond(.init(status: 206, contentRange: "bytes 0-9/10"))
        exact.wrote(10)
        #expect(exact.requestEnded(nil) == [.land])
    }

    // MARK: - Redirects

    static func redirect(_ attempt: inout DownloadAttempt, to target: String, from: URL = url, location: String? = nil) -> [DownloadAttempt.Action] {
        attempt.redirected(.init(from: from, target: URL(string: target)!, location: location ?? target))
        return attempt.requestEnded(nil)
    }

    @Test func aRedirectIsCheckedThenAskedWithCredentialsKeptOnlyOnTheSameOrigin() {
        var (attempt, _) = Self.started()
        #expect(Self.redirect(&attempt, to: "http://example.test/other") == [.checkRedirect(URL(string: "http://example.test/other")!)])
        let same = Self.plan(attempt.redirectChecked(URL(string: "http://example.test/other")!, refused: nil))
        #expect(same?.withholdCredentials == false)
        var (away, _) = Self.started()
        _ = Self.redirect(&away, to: "http://elsewhere.test/f")
        let other = Self.plan(away.redirectChecked(URL(string: "http://elsewhere.test/f")!, refused: nil))
        #expect(other?.withholdCredentials == true && other?.url.host == "elsewhere.test")
        #expect(away.finalURL?.host == "elsewhere.test")
    }

    @Test func redirectsThatAreRefusedFailTheJob() {
        var (foreign, _) = Self.started()
        #expect(Self.failure(Self.redirect(&foreign, to: "http://example.test/x", location: "ftp://example.test/x"))! == (.redirect, false))
        var (downgrade, _) = Self.started()
        let secure = URL(string: "https://example.test/f")!
        #expect(Self.failure(Self.redirect(&downgrade, to: "http://example.test/f", from: secure))! == (.redirect, false))
        var (looping, _) = Self.started()
        for _ in 0..<2 {
            let target = URL(string: "http://example.test/loop")!
            _ = Self.redirect(&looping, to: target.absoluteString)
            _ = looping.redirectChecked(target, refused: nil)
        }
        #expect(Self.failure(Self.redirect(&looping, to: "http://example.test/loop"))! == (.redirect, false))
        var (hostRefused, _) = Self.started()
        _ = Self.redirect(&hostRefused, to: "http://10.0.0.1/")
        let refusal = TransferFailure.permanent(JobError(code: .hostNotAllowed, message: "no"))
        #expect(Self.failure(hostRefused.redirectChecked(URL(string: "http://10.0.0.1/")!, refused: refusal))! == (.hostNotAllowed, false))
    }

    @Test func theRedirectCountStartsAgainWithEachSegment() {
        var (attempt, _) = Self.started(validator: "\"v\"")
        for _ in 0..<2 {
            let target = URL(string: "http://example.test/r")!
            _ = Self.redirect(&attempt, to: target.absoluteString)
            _ = attempt.redirectChecked(target, refused: nil)
        }
        _ = attempt.respond(.init(status: 206, contentRange: "bytes 0-99/500", validator: "\"v\""))
        attempt.wrote(100)
        _ = attempt.requestEnded(nil)
        _ = attempt.proceed()
        #expect(Self.redirect(&attempt, to: "http://example.test/r").first == .checkRedirect(URL(string: "http://example.test/r")!))
    }

    /// The next ranges of an attempt go where its redirects led, not through them again, with the
    /// credentials as the redirects decided; the final URL has its dot segments resolved.
    @Test func laterRangesGoWhereTheRedirectLed() {
        var (attempt, _) = Self.started(validator: "\"v\"")
        _ = Self.redirect(&attempt, to: "http://elsewhere.test/sub/../f")
        let first = Self.plan(attempt.redirectChecked(URL(string: "http://elsewhere.test/sub/../f")!, refused: nil))
        #expect(first?.url.absoluteString == "http://elsewhere.test/f")
        #expect(attempt.finalURL?.absoluteString == "http://elsewhere.test/f")
        _ = attempt.respond(.init(status: 206, contentRange: "bytes 0-99/500", validator: "\"v\""))
        attempt.wrote(100)
        let next = Self.plan(attempt.requestEnded(nil) + attempt.proceed())
        #expect(next?.url.absoluteString == "http://elsewhere.test/f")
        #expect(next?.withholdCredentials == true)
        #expect(next?.range?.lowerBound == 100)
    }

    // MARK: - Digests

    @Test func anAnnouncedSHA512BeforeAnyByteIsHashedToo() {
        let digest = "sha-512=:" + Data(repeating: 1, count: 64).base64EncodedString() + ":"
        var (attempt, _) = Self.started()
        let actions = attempt.respond(.init(status: 200, expectedContentLength: 3, reprDigest: digest))
        #expect(actions.contains(.hashSHA512))
        #expect(attempt.announcedDigest?.algorithm == .sha512)
    }
}
