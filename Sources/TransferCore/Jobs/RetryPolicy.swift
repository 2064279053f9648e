public import Foundation
public import TransferProtocol

/// The daemon-wide retry defaults; a job's own `RetryLimits` override them field by field.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts that may fail in a row (without getting further into the file) before the job fails.
    public var maxAttempts = 20
    /// Time from submission after which a job fails instead of trying again.
    public var maxTime: Duration = .seconds(7 * 24 * 3600)
    /// The first wait after a failure; each further failure in a row doubles it…
    public var initialDelay: Duration = .seconds(1)
    /// …up to this. The wait actually taken is a random point in its upper half (jitter).
    public var maxDelay: Duration = .seconds(600)
    /// Seconds without a byte after which an attempt is abandoned and retried.
    public var idleTimeout: Duration = .seconds(60)
    /// Bytes per second below which an attempt counts as stalled (0: no such check)…
    public var lowSpeedBytesPerSecond: Int64 = 0
    /// …when its rate stays below that for this long.
    public var lowSpeedTime: Duration = .seconds(60)

    public init() {}

    /// The limits of one job: its own where it gave them, these defaults elsewhere.
    public func limits(for job: RetryLimits?) -> EffectiveRetryLimits {
        EffectiveRetryLimits(
            maxAttempts: job?.maxAttempts ?? maxAttempts,
            maxTime: job?.maxTimeSeconds ?? maxTime.seconds,
            idleTimeout: job?.idleTimeoutSeconds ?? idleTimeout.seconds,
            lowSpeedBytesPerSecond: job?.lowSpeedBytesPerSecond ?? lowSpeedBytesPerSecond,
            lowSpeedTime: job?.lowSpeedSeconds ?? lowSpeedTime.seconds)
    }

    /// How long to wait before attempt number `failures + 1`: exponential back-off from
    /// `initialDelay`, capped at `maxDelay`, jittered into the upper half so that many jobs failing
    /// together do not come back together.
    public func backoff(afterFailures failures: Int, random: Double = Double.random(in: 0...1)) -> Double {
        let doublings = Double(max(0, min(failures - 1, 62)))
        let full = min(maxDelay.seconds, initialDelay.seconds * pow(2, doublings))
        return full / 2 + full / 2 * random
    }
}

/// One job's limits after defaults are applied.
public struct EffectiveRetryLimits: Sendable, Equatable {
    public var maxAttempts: Int
    /// Seconds from submission.
    public var maxTime: Double
    /// Seconds.
    public var idleTimeout: Double
    public var lowSpeedBytesPerSecond: Int64
    /// Seconds.
    public var lowSpeedTime: Double
}

extension Duration {
    /// The duration in seconds, with its fraction.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

/// Reads `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
public enum RetryAfter {
    /// Seconds to wait from `now`; nil when the header is missing or unreadable.
    public static func seconds(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return Double(value.prefix(12)) ?? nil
        }
        return HTTPDate.parse(value).map { max(0, $0.timeIntervalSince(now)) }
    }
}

/// Which HTTP answers are worth retrying.
enum HTTPStatusClass {
    /// 408, 429, 500, 502, 503, 504 and Cloudflare's 520–524: the server or a proxy is overloaded
    /// or restarting; the same request may well succeed later.
    static func isTransient(_ status: Int) -> Bool {
        [408, 429, 500, 502, 503, 504].contains(status) || (520...524).contains(status)
    }
}
