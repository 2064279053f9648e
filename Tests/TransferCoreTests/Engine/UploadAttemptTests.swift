import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// An upload's decisions, one input at a time: which answers complete it, which are retried, what
/// the job keeps of the server's answer.
@Suite("Upload attempt: answers, retry classes, the kept response")
struct UploadAttemptTests {
    static let url = URL(string: "http://example.test/put")!

    static func started(bodyLimit: Int = 64) -> UploadAttempt {
        var attempt = UploadAttempt(settings: .init(url: url, size: 2 << 20, bodyLimit: bodyLimit))
        #expect(attempt.proceed() == [plainSend])
        return attempt
    }

    /// A plain upload's one request: the whole file with the job's method.
    static let plainSend = UploadAttempt.Action.send(
        .init(method: "PUT", url: url, headers: ["Content-Digest": ""], body: .wholeFile))

    static func response(_ status: Int, retryAfter: String? = nil) -> UploadAttempt.Response {
        UploadAttempt.Response(status: status, location: "/stored/1", etag: "\"abc\"", contentType: "text/plain", retryAfter: retryAfter)
    }

    @Test func a2xxCompletesWithTheAnswerAndItsBody() {
        var attempt = Self.started()
        #expect(attempt.respond(Self.response(201)) == [.acceptBody])
        attempt.received(Data("stored".utf8))
        let actions = attempt.requestEnded(nil)
        #expect(actions == [.complete(UploadResponse(status: 201, location: "/stored/1", etag: "\"abc\"", contentType: "text/plain", body: "stored", bodyEncoding: "utf8"))])
    }

    @Test func aBodyThatIsNotUTF8IsKeptAsBase64AndALongOneIsCut() {
        var attempt = Self.started(bodyLimit: 4)
        _ = attempt.respond(Self.response(200))
        attempt.received(Data([0xff, 0xfe, 0x00, 0x01, 0x02, 0x03]))
        guard case .complete(let response) = attempt.requestEnded(nil).first else {
            Issue.record("no completion")
            return
        }
        #expect(response.body == Data([0xff, 0xfe, 0x00, 0x01]).base64EncodedString())
        #expect(response.bodyEncoding == "base64")
        #expect(response.bodyTruncated == true)
    }

    @Test func aConnectionLostBeforeAnyAnswerIsRetriedAndOneAfterA2xxStillCompletes() {
        var attempt = Self.started()
        let lost = TransferFailure.transient(JobError(code: .connectionLost, message: "lost"))
        #expect(attempt.requestEnded(lost) == [.retryLater(lost)])
        var answered = Self.started()
        _ = answered.respond(Self.response(204))
        guard case .complete(let response) = answered.requestEnded(lost).first else {
            Issue.record("a 2xx answer completes")
            return
        }
        #expect(response.status == 204)
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504, 522])
    func overloadedServersAreRetriedHonouringRetryAfter(status: Int) {
        var attempt = Self.started()
        _ = attempt.respond(Self.response(status, retryAfter: "7"))
        guard case .retryLater(let failure) = attempt.requestEnded(nil).first else {
            Issue.record("\(status) is retried")
            return
        }
        #expect(failure.error.httpStatus == status)
        #expect(failure.retryAfter == 7)
    }

    @Test func lengthRequiredAndTooLargeFailSayingWhatToDoAndQuoteTheServer() {
        var length = Self.started()
        _ = length.respond(Self.response(411))
        length.received(Data("send a length\r\nplease".utf8))
        guard case .fail(let lengthError) = length.requestEnded(nil).first else {
            Issue.record("411 fails")
            return
        }
        #expect(lengthError.message.contains("Content-Length") && lengthError.message.contains("send a length please"))
        var large = Self.started()
        _ = large.respond(Self.response(413))
        guard case .fail(let largeError) = large.requestEnded(nil).first else {
            Issue.record("413 fails")
            return
        }
        #expect(largeError.httpStatus == 413)
        #expect(largeError.message.contains("2.0 MiB") && largeError.message.contains("client_max_body_size"))
    }

    @Test func aRedirectIsNotFollowedAndALongRefusalIsShortened() {
        var attempt = Self.started(bodyLimit: 4096)
        _ = attempt.respond(Self.response(307))
        attempt.received(Data(String(repeating: "x", count: 1000).utf8))
        guard case .fail(let error) = attempt.requestEnded(nil).first else {
            Issue.record("a redirect fails the upload")
            return
        }
        #expect(error.message.contains("does not follow redirects"))
        #expect(error.message.count < 700)
    }

    @Test func aNewAttemptForgetsTheLastAnswer() {
        var attempt = Self.started()
        _ = attempt.respond(Self.response(503))
        attempt.received(Data("busy".utf8))
        #expect(attempt.proceed() == [Self.plainSend])
        #expect(attempt.response == nil && attempt.body.isEmpty)
    }
}
