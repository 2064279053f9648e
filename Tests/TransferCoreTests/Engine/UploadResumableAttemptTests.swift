import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// A resumable upload's decisions (tus 1.0, the IETF draft), one answer at a time: the probe, the
/// creation, appends in segments, the offset asked for after an interruption, and what ends it.
@Suite("Upload attempt: resumable uploads")
struct UploadResumableAttemptTests {
    static let url = URL(string: "http://example.test/files")!
    static let resource = URL(string: "http://example.test/files/7")!
    static let size: Int64 = 20 << 20
    static let segment: Int64 = 8 << 20

    static func attempt(_ mode: ResumableMode, resource: URL? = nil, protocolUsed: UploadProtocol? = nil) -> UploadAttempt {
        var settings = UploadAttempt.Settings(url: url, size: size, bodyLimit: 256)
        settings.resumable = mode
        settings.resource = resource
        settings.protocolUsed = protocolUsed
        settings.segmentBytes = segment
        settings.method = "POST"
        settings.contentDigest = "sha-256=:x:"
        return UploadAttempt(settings: settings)
    }

    static func answer(_ status: Int, offset: Int64? = nil, location: String? = nil, complete: Bool? = nil) -> UploadAttempt.Response {
        var response = UploadAttempt.Response(status: status, location: location)
        response.uploadOffset = offset
        response.uploadComplete = complete
        return response
    }

    /// Feeds one answer to the request in flight and returns what follows.
    static func answering(_ attempt: inout UploadAttempt, _ response: UploadAttempt.Response, body: String = "") -> [UploadAttempt.Action] {
        _ = attempt.respond(response)
        if !body.isEmpty { attempt.received(Data(body.utf8)) }
        return attempt.requestEnded(nil)
    }

    static func sent(_ actions: [UploadAttempt.Action]) -> UploadAttempt.Request? {
        for case .send(let request) in actions { return request }
        return nil
    }

    @Test func autoAsksTheServerAndUsesTusWhenItIsAnnounced() throws {
        var attempt = Self.attempt(.auto)
        let probe = try #require(Self.sent(attempt.proceed()))
        #expect(probe.method == "OPTIONS" && probe.body == .none)
        var announced = Self.answer(204)
        announced.announcesTus = true
        let actions = Self.answering(&attempt, announced)
        #expect(actions.first == .record(.tus, resource: nil, offset: 0))
        let create = try #require(Self.sent(actions))
        #expect(create.method == "POST" && create.url == Self.url && create.body == .none)
        #expect(create.headers["Tus-Resumable"] == "1.0.0" && create.headers["Upload-Length"] == String(Self.size))
    }

    @Test func autoFallsBackToAPlainUploadWhenNothingIsAnnouncedAndRetriesAnOverloadedServer() throws {
        var plain = Self.attempt(.auto)
        _ = plain.proceed()
        let actions = Self.answering(&plain, Self.answer(405))
        #expect(actions.first == .record(.plain, resource: nil, offset: 0))
        let request = try #require(Self.sent(actions))
        #expect(request.method == "POST" && request.body == .wholeFile && request.headers["Content-Digest"] == "sha-256=:x:")

        var busy = Self.attempt(.auto)
        _ = busy.proceed()
        guard case .retryLater = Self.answering(&busy, Self.answer(503)).first else {
            Issue.record("a 503 to the probe is retried")
            return
        }
    }

    @Test func tusCreatesThenAppendsInSegmentsAndCompletesWithTheResource() throws {
        var attempt = Self.attempt(.tus)
        #expect(Self.sent(attempt.proceed())?.method == "POST")
        var actions = Self.answering(&attempt, Self.answer(201, offset: 0, location: "/files/7"))
        #expect(actions.first == .record(.tus, resource: Self.resource, offset: 0))
        var patch = try #require(Self.sent(actions))
        #expect(patch.method == "PATCH" && patch.url == Self.resource && patch.body == .range(0..<Self.segment))
        #expect(patch.headers["Upload-Offset"] == "0" && patch.headers["Content-Type"] == "application/offset+octet-stream")
        actions = Self.answering(&attempt, Self.answer(204, offset: Self.segment))
        patch = try #require(Self.sent(actions))
        #expect(patch.body == .range(Self.segment..<(2 * Self.segment)))
        actions = Self.answering(&attempt, Self.answer(204, offset: 2 * Self.segment))
        patch = try #require(Self.sent(actions))
        #expect(patch.body == .range((2 * Self.segment)..<Self.size))
        actions = Self.answering(&attempt, Self.answer(204, offset: Self.size))
        #expect(actions.last == .complete(UploadResponse(status: 204, location: Self.resource.absoluteString)))
    }

    @Test func anInterruptedUploadAsksForTheOffsetAndContinuesFromThere() throws {
        var attempt = Self.attempt(.tus)
        _ = attempt.proceed()
        _ = Self.answering(&attempt, Self.answer(201, offset: 0, location: Self.resource.absoluteString))
        _ = Self.answering(&attempt, Self.answer(204, offset: Self.segment))
        // The second append breaks off: the server holds the first segment for certain.
        let failure = TransferFailure.transient(JobError(code: .connectionLost, message: "lost"))
        #expect(attempt.requestEnded(failure) == [.retryLater(failure)])
        #expect(attempt.keptBytes == Self.segment)
        // The next attempt (here after a restart: a new attempt from the journaled resource).
        var fresh = Self.attempt(.tus, resource: Self.resource, protocolUsed: .tus)
        let head = try #require(Self.sent(fresh.proceed()))
        #expect(head.method == "HEAD" && head.url == Self.resource && head.headers["Tus-Resumable"] == "1.0.0")
        let actions = Self.answering(&fresh, Self.answer(200, offset: 12 << 20))
        #expect(actions.first == .record(.tus, resource: Self.resource, offset: 12 << 20))
        #expect(Self.sent(actions)?.body == .range((12 << 20)..<(20 << 20)))
    }

    @Test func ietfCreatesIncompleteThenMarksTheLastAppendCompleteAndKeepsTheFinalAnswer() throws {
        var attempt = Self.attempt(.ietf)
        let create = try #require(Self.sent(attempt.proceed()))
        #expect(create.method == "POST" && create.headers["Upload-Complete"] == "?0" && create.headers["Upload-Draft-Interop-Version"] == "6")
        #expect(create.headers["Upload-Length"] == String(Self.size) && create.body == .none)
        var actions = Self.answering(&attempt, Self.answer(201, offset: 0, location: "/files/7", complete: false))
        var patch = try #require(Self.sent(actions))
        #expect(patch.headers["Upload-Complete"] == "?0" && patch.headers["Content-Type"] == "application/partial-upload")
        actions = Self.answering(&attempt, Self.answer(204, offset: Self.segment, complete: false))
        actions = Self.answering(&attempt, Self.answer(204, offset: 2 * Self.segment, complete: false))
        patch = try #require(Self.sent(actions))
        #expect(patch.headers["Upload-Complete"] == "?1" && patch.body == .range((2 * Self.segment)..<Self.size))
        actions = Self.answering(&attempt, Self.answer(201, location: nil, complete: true), body: "{\"stored\":true}")
        #expect(actions.last == .complete(UploadResponse(
            status: 201, location: Self.resource.absoluteString, body: "{\"stored\":true}", bodyEncoding: "utf8")))
    }

    @Test func anOffsetMismatchAsksAgainAndAServerThatKeepsDisagreeingIsRetriedLater() throws {
        var attempt = Self.attempt(.tus, resource: Self.resource, protocolUsed: .tus)
        _ = attempt.proceed()
        _ = Self.answering(&attempt, Self.answer(200, offset: 0))
        for _ in 0..<UploadAttempt.maxConflicts {
            let head = Self.sent(Self.answering(&attempt, Self.answer(409)))
            #expect(head?.method == "HEAD")
            _ = Self.answering(&attempt, Self.answer(200, offset: 0))
        }
        guard case .retryLater(let failure) = Self.answering(&attempt, Self.answer(409)).first else {
            Issue.record("a server that keeps answering 409 is retried later")
            return
        }
        #expect(failure.error.message.contains("409"))
    }

    @Test func aForgottenUploadIsCreatedAgainAndACreationWithoutLocationFails() throws {
        var gone = Self.attempt(.ietf, resource: Self.resource, protocolUsed: .ietf)
        _ = gone.proceed()
        let actions = Self.answering(&gone, Self.answer(404))
        #expect(actions.first == .record(.ietf, resource: nil, offset: 0))
        #expect(Self.sent(actions)?.headers["Upload-Complete"] == "?0")

        var nowhere = Self.attempt(.tus)
        _ = nowhere.proceed()
        guard case .fail(let error) = Self.answering(&nowhere, Self.answer(201)).first else {
            Issue.record("a creation without Location fails")
            return
        }
        #expect(error.message.contains("Location") && error.message.contains("--resumable off"))
    }

    /// A tus server that will not resume (a 400 to HEAD, as one from PyPI answers an upload created
    /// without `filetype`) gets a new upload from 0, not a failed job; 429 is still retried later.
    @Test func anOffsetRequestRefusedWithA4xxStartsANewUpload() {
        for status in [400, 403, 404, 410, 422] {
            var attempt = Self.attempt(.tus, resource: Self.resource, protocolUsed: .tus)
            _ = attempt.proceed()
            let actions = Self.answering(&attempt, Self.answer(status))
            #expect(actions.first == .record(.tus, resource: nil, offset: 0), "\(status)")
            #expect(Self.sent(actions)?.method == "POST", "\(status)")
        }
        var busy = Self.attempt(.tus, resource: Self.resource, protocolUsed: .tus)
        _ = busy.proceed()
        #expect(Self.sent(Self.answering(&busy, Self.answer(429)))?.method != "POST")
    }

    /// tus creations carry `filename` and `filetype` metadata, as the common clients send them.
    @Test func aTusCreationNamesTheFileAndItsType() throws {
        var attempt = Self.attempt(.tus, protocolUsed: .tus)
        let create = try #require(Self.sent(attempt.proceed()))
        let metadata = create.headers["Upload-Metadata"] ?? ""
        #expect(metadata.contains("filetype " + Data("application/octet-stream".utf8).base64EncodedString()), "\(metadata)")
    }

    @Test func anOffsetPastTheFileIsAProtocolError() {
        var attempt = Self.attempt(.tus, resource: Self.resource, protocolUsed: .tus)
        _ = attempt.proceed()
        guard case .fail(let error) = Self.answering(&attempt, Self.answer(200, offset: Self.size + 1)).first else {
            Issue.record("an offset past the end fails")
            return
        }
        #expect(error.code == .protocolViolation)
    }
}
