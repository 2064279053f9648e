import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// Where an upload's requests go and what they carry: a creation's `Location` resolved against
/// the request's URL, origins compared, credentials kept to the job URL's origin, and an append
/// the server does not take counted as a failed attempt.
@Suite("Upload attempt: origins and appends that do not advance")
struct UploadOriginTests {
    static let base = URL(string: "http://example.test/files")!

    @Test(arguments: [
        ("http://127.0.0.1:9999/files/1", "http://127.0.0.1:9999/files/1"),
        ("//127.0.0.1:9999/files/1", "http://127.0.0.1:9999/files/1"),
        ("/files/7", "http://example.test/files/7"),
        ("files/7", "http://example.test/files/7"),
        ("7", "http://example.test/7"),
        (" http://other.test/u/1 ", "http://other.test/u/1"),
    ])
    func aLocationIsResolvedAgainstTheRequestURL(location: String, expected: String) {
        #expect(UploadAttempt.resolve(location: location, against: Self.base)?.absoluteString == expected)
    }

    @Test(arguments: ["https://example.test/files/1", "ftp://example.test/1", "file:///etc/passwd", "http:///x", ""])
    func aLocationOfAnotherSchemeOrWithoutAHostIsRefused(location: String) {
        #expect(UploadAttempt.resolve(location: location, against: Self.base) == nil, "\(location)")
    }

    @Test func anHTTPSLocationMayNotDowngrade() {
        let secure = URL(string: "https://example.test/files")!
        #expect(UploadAttempt.resolve(location: "http://example.test/files/1", against: secure) == nil)
        #expect(UploadAttempt.resolve(location: "//example.test/files/1", against: secure)?.absoluteString == "https://example.test/files/1")
    }

    @Test func originsCompareSchemeHostAndPortWithDefaultPortsMadeExplicit() throws {
        func same(_ a: String, _ b: String) throws -> Bool {
            HTTPOrigin.same(try #require(URL(string: a)), try #require(URL(string: b)))
        }
        #expect(try same("http://Example.test/a", "http://example.test:80/b?q"))
        #expect(try same("https://example.test/a", "https://example.test:443/"))
        #expect(try same("http://user:pw@example.test/a", "http://example.test/b"))
        #expect(try same("http://[::1]:8080/a", "http://[::1]:8080/b"))
        #expect(try !same("http://example.test/a", "https://example.test/a"))
        #expect(try !same("http://example.test/a", "http://example.test:8080/a"))
        #expect(try !same("http://example.test/a", "http://example.test.evil/a"))
        #expect(try !same("http://localhost:80/a", "http://127.0.0.1:80/a"))
    }

    @Test func credentialsGoOnlyToTheJobURLsOrigin() throws {
        let job = try #require(URL(string: "http://localhost:8080/files"))
        let headers = [
            "Authorization": "Bearer s3cret", "Cookie": "sid=1", "Proxy-Authorization": "Basic eA==", "X-Api-Key": "k",
            "X-Trace": "t", "Content-Type": "text/plain",
        ]
        let home = UploadRunner.credentials(headers, for: try #require(URL(string: "http://localhost:8080/files/1")), jobURL: job)
        #expect(home == headers)
        for other in ["http://127.0.0.1:8080/files/1", "http://localhost:8081/files/1", "https://localhost:8080/files/1"] {
            let away = UploadRunner.credentials(headers, for: try #require(URL(string: other)), jobURL: job)
            #expect(away == ["X-Trace": "t", "Content-Type": "text/plain"], "\(other): \(away)")
        }
    }

    // MARK: - Appends that do not advance

    static func attempt(size: Int64 = 20 << 20, _ mode: ResumableMode = .tus) -> UploadAttempt {
        var settings = UploadAttempt.Settings(url: base, size: size, bodyLimit: 256)
        settings.resumable = mode
        settings.segmentBytes = 8 << 20
        return UploadAttempt(settings: settings)
    }

    static func answer(_ attempt: inout UploadAttempt, _ status: Int, offset: Int64?, location: String? = nil) -> [UploadAttempt.Action] {
        var response = UploadAttempt.Response(status: status, location: location)
        response.uploadOffset = offset
        _ = attempt.respond(response)
        return attempt.requestEnded(nil)
    }

    static func sent(_ actions: [UploadAttempt.Action]) -> UploadAttempt.Request? {
        for case .send(let request) in actions { return request }
        return nil
    }

    @Test func aCreationsLocationOnAnotherHostIsWhereTheAppendsGo() throws {
        var attempt = Self.attempt()
        _ = attempt.proceed()
        let actions = Self.answer(&attempt, 201, offset: 0, location: "//127.0.0.1:9999/files/1")
        #expect(Self.sent(actions)?.url.absoluteString == "http://127.0.0.1:9999/files/1")
    }

    @Test(arguments: [ResumableMode.tus, .ietf])
    func aSuccessfulAppendThatDoesNotAdvanceIsAFailedAttempt(mode: ResumableMode) throws {
        var attempt = Self.attempt(mode)
        _ = attempt.proceed()
        let first = try #require(Self.sent(Self.answer(&attempt, 201, offset: 0, location: "/files/1")))
        #expect(first.body == .range(0..<(8 << 20)))
        // The server kept all but the last byte: it advanced, so the next append goes out.
        let second = try #require(Self.sent(Self.answer(&attempt, 204, offset: (8 << 20) - 1)))
        #expect(second.body == .range(((8 << 20) - 1)..<(16 << 20) - 1))
        // Then it takes nothing: the attempt ends and the retry policy decides when to try again.
        let actions = Self.answer(&attempt, 204, offset: (8 << 20) - 1)
        #expect(Self.sent(actions) == nil, "\(actions)")
        guard case .retryLater(let failure) = actions.last else {
            Issue.record("not a failed attempt: \(actions)")
            return
        }
        #expect(failure.error.code == .protocolViolation && failure.error.message.contains("did not advance"), "\(failure.error.message)")
        #expect(attempt.keptBytes == (8 << 20) - 1)
    }

    @Test func theStallDecision() {
        #expect(UploadAttempt.stalled(100..<200, offset: 100))
        #expect(UploadAttempt.stalled(100..<200, offset: 99))
        #expect(!UploadAttempt.stalled(100..<200, offset: 101))
        #expect(!UploadAttempt.stalled(100..<200, offset: 200))
        #expect(!UploadAttempt.stalled(100..<100, offset: 100))
    }
}
