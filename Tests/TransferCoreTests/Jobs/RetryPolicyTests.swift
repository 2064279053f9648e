import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test func backoffDoublesUpToTheCapWithJitterInTheUpperHalf() {
        var policy = RetryPolicy()
        policy.initialDelay = .seconds(1)
        policy.maxDelay = .seconds(60)
        #expect(policy.backoff(afterFailures: 1, random: 1) == 1)
        #expect(policy.backoff(afterFailures: 1, random: 0) == 0.5)
        #expect(policy.backoff(afterFailures: 4, random: 1) == 8)
        #expect(policy.backoff(afterFailures: 30, random: 1) == 60)
        #expect(policy.backoff(afterFailures: 1000, random: 0) == 30)
        for failures in 1...20 {
            let delay = policy.backoff(afterFailures: failures)
            #expect(delay >= 0.5 && delay <= 60)
        }
    }

    @Test func jobLimitsOverrideDefaultsFieldByField() {
        let limits = RetryPolicy().limits(for: RetryLimits(maxAttempts: 2, lowSpeedBytesPerSecond: 10))
        #expect(limits.maxAttempts == 2)
        #expect(limits.lowSpeedBytesPerSecond == 10)
        #expect(limits.idleTimeout == 60)
        #expect(limits.maxTime == 7 * 24 * 3600)
    }

    @Test func retryAfterReadsSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.seconds("120", now: now) == 120)
        #expect(RetryAfter.seconds(" 0 ", now: now) == 0)
        #expect(RetryAfter.seconds("Tue, 14 Nov 2023 22:14:20 GMT", now: now) == 60)
        #expect(RetryAfter.seconds("Tuesday, 14-Nov-23 22:15:20 GMT", now: now) == 120, "the obsolete RFC 850 form")
        #expect(RetryAfter.seconds("Tue, 14 Nov 2023 20:00:00 GMT", now: now) == 0, "a date in the past means now")
        #expect(RetryAfter.seconds("-5", now: now) == nil)
        #expect(RetryAfter.seconds("soon", now: now) == nil)
        #expect(RetryAfter.seconds(nil, now: now) == nil)
    }

    @Test func transientStatusesAreTheOverloadedOnes() {
        for status in [408, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524] {
            #expect(HTTPStatusClass.isTransient(status), "\(status)")
        }
        for status in [400, 401, 403, 404, 410, 416, 501, 505, 525] {
            #expect(!HTTPStatusClass.isTransient(status), "\(status)")
        }
    }

    @Test func digestHeadersPickTheStrongestSupportedAlgorithm() {
        let sha256 = Data(repeating: 1, count: 32).base64EncodedString()
        let sha512 = Data(repeating: 2, count: 64).base64EncodedString()
        let both = AnnouncedDigest.parse("sha-512=:\(sha512):, sha-256=:\(sha256):", header: "Repr-Digest")
        #expect(both?.algorithm == .sha256)
        #expect(both?.hex == String(repeating: "01", count: 32))
        #expect(AnnouncedDigest.parse("sha-512=:\(sha512):", header: "Repr-Digest")?.algorithm == .sha512)
        #expect(AnnouncedDigest.parse("md5=:AAAAAAAAAAAAAAAAAAAAAA==:", header: "Repr-Digest") == nil, "unsupported algorithms are ignored")
        #expect(AnnouncedDigest.parse("sha-256=:AAAA:", header: "Repr-Digest") == nil, "a digest of the wrong length is ignored")
        #expect(AnnouncedDigest.parse("sha-256=not-a-byte-sequence", header: "Repr-Digest") == nil)
        #expect(AnnouncedDigest.parse("garbage ;;; ==", header: "Repr-Digest") == nil)
    }
}
