import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TransferProtocol
@testable import TransferCore
#if canImport(Glibc)
import Glibc
#endif

@Suite("Failure classification: what is retried, and what the message says to do")
struct FailureClassifierTests {
    static let url = URL(string: "https://user:secret@example.test/f")!

    @Test(arguments: [(ENOSPC, .diskFull, true), (EDQUOT, .diskFull, true), (EACCES, .disk, false), (EPERM, .disk, false),
        (ENOENT, .disk, false), (EROFS, .disk, false), (EIO, .disk, false)] as [(Int32, JobErrorCode, Bool)])
    func diskErrors(errno: Int32, code: JobErrorCode, retried: Bool) {
        let failure = FailureClassifier.disk(FileIOError("write", "/d/f.part", errno: errno), writing: "/d/f.part")
        #expect(failure.error.code == code && failure.retryable == retried)
        #expect(failure.error.message.contains("/d/f.part"))
    }

    @Test func diskMessagesSayWhatToDo() {
        let hints: [Int32: String] = [
            ENOSPC: "free some space", EACCES: "writable", ENOENT: "create it again", EROFS: "read-only", EIO: "dmesg",
        ]
        for (errno, hint) in hints {
            #expect(FailureClassifier.disk(FileIOError("write", "/x", errno: errno), writing: "/x").error.message.contains(hint))
        }
    }

    @Test func statusClasses() {
        for status in [408, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524] {
            let failure = FailureClassifier.status(status, retryAfter: "5", url: Self.url)
            #expect(failure.retryable && failure.retryAfter == 5 && failure.error.httpStatus == status)
        }
        for status in [300, 304, 400, 401, 403, 404, 405, 410, 418, 451, 501, 505, 599] {
            let failure = FailureClassifier.status(status, retryAfter: "5", url: Self.url)
            #expect(!failure.retryable && failure.retryAfter == nil && failure.error.code == .httpStatus)
        }
        #expect(FailureClassifier.status(401, retryAfter: nil, url: Self.url).error.message.contains("credentials"))
        #expect(FailureClassifier.status(404, retryAfter: nil, url: Self.url).error.message.contains("check the URL"))
        #expect(!FailureClassifier.status(404, retryAfter: nil, url: Self.url).error.message.contains("secret"), "credentials are redacted")
    }

    @Test func networkErrors() {
        let cases: [(URLError.Code, JobErrorCode, Bool)] = [
            (.timedOut, .timeout, true), (.cannotFindHost, .dns, true), (.dnsLookupFailed, .dns, true),
            (.cannotConnectToHost, .connectionRefused, true), (.networkConnectionLost, .connectionLost, true),
            (.secureConnectionFailed, .tls, false), (.serverCertificateUntrusted, .tls, false),
            (.serverCertificateHasBadDate, .tls, false), (.httpTooManyRedirects, .redirect, false),
            (.badServerResponse, .protocolViolation, false), (.unsupportedURL, .unsupportedURL, false),
            (.notConnectedToInternet, .network, true), (.unknown, .network, true),
        ]
        for (code, expected, retried) in cases {
            let failure = FailureClassifier.network(URLError(code), url: Self.url, idleTimeout: 30)
            #expect(failure.error.code == expected && failure.retryable == retried, "\(code)")
        }
        #expect(FailureClassifier.network(URLError(.timedOut), url: Self.url, idleTimeout: 30).error.message.contains("30 s"))
    }

    @Test func libcurlsOutOfMemoryForHugeHeadersIsAProtocolError() {
        let error = NSError(domain: NSURLErrorDomain, code: -1, userInfo: [NSLocalizedDescriptionKey: "Out of memory"])
        let failure = FailureClassifier.network(error, url: Self.url, idleTimeout: 30)
        #expect(failure.error.code == .protocolViolation && !failure.retryable)
    }

    /// FoundationNetworking hands libcurl's certificate and handshake failures over as an unknown
    /// error with libcurl's message; none of them is worth another attempt.
    @Test(arguments: [
        "SSL certificate problem: unable to get local issuer certificate",
        "SSL certificate problem: certificate has expired",
        "SSL certificate problem: self-signed certificate",
        "SSL: no alternative certificate subject name matches target host name 'wrong.test'",
        "OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to example.test:443",
    ])
    func certificateFailuresAreFinalTLS(message: String) {
        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [NSLocalizedDescriptionKey: message])
        let failure = FailureClassifier.network(error, url: Self.url, idleTimeout: 30)
        #expect(failure.error.code == .tls && !failure.retryable)
        #expect(failure.error.message.contains(message) && failure.error.message.contains("--cacert") && failure.error.message.contains("ca_file"))
        #expect(!failure.error.message.contains("secret"))
    }

    @Test func otherUnknownFailuresAreRetried() {
        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [NSLocalizedDescriptionKey: "Recv failure: Connection reset by peer"])
        let failure = FailureClassifier.network(error, url: Self.url, idleTimeout: 30)
        #expect(failure.error.code == .network && failure.retryable)
    }

    @Test func loginAnswersSayHowToLogIn() {
        #expect(FailureClassifier.status(401, retryAfter: nil, url: Self.url).error.message.contains("USER:PASSWORD@"))
        let proxy = FailureClassifier.status(407, retryAfter: nil, url: Self.url)
        #expect(!proxy.retryable && proxy.error.message.contains("https_proxy"))
    }

    /// A challenge is answered once, with the URL's own credentials; never without them, never twice.
    @Test func loginChallengeIsAnsweredAtMostOnce() {
        let withLogin = URL(string: "https://me:p%40ss@example.test/f")
        let basic = "NSURLAuthenticationMethodHTTPBasic"
        #expect(LoginChallenge.answer(method: basic, previousFailures: 0, url: withLogin) == .credential(user: "me", password: "p@ss"))
        #expect(LoginChallenge.answer(method: basic, previousFailures: 1, url: withLogin) == .refuse)
        #expect(LoginChallenge.answer(method: basic, previousFailures: 0, url: URL(string: "https://example.test/f")) == .refuse)
        #expect(LoginChallenge.answer(method: basic, previousFailures: 0, url: nil) == .refuse)
    }
}

/// The engine's own idle limit, behind FoundationNetworking's timer.
@Suite("Limits monitor: idle")
struct LimitsMonitorIdleTests {
    @Test func aTransferThatGetsNowhereTimesOutAfterTheIdleTimeoutAndGrace() throws {
        let second: UInt64 = 1_000_000_000
        #expect(LimitsMonitor.idleFailure(since: 0, now: 24 * second, idleTimeout: 20, host: "h") == nil)
        let failure = try #require(LimitsMonitor.idleFailure(since: 0, now: 25 * second, idleTimeout: 20, host: "h"))
        #expect(failure.error.code == .timeout && failure.retryable)
        #expect(failure.error.message.contains("idle_timeout_seconds"))
        #expect(LimitsMonitor.idleFailure(since: 0, now: 1_000 * second, idleTimeout: 0, host: "h") == nil)
    }
}
