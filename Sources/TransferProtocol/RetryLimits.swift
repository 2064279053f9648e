/// How long and how often a job keeps trying. Every field is optional on the wire; one left out
/// takes the daemon's configured default (see `retry_*`, `idle_timeout_seconds` and `low_speed_*`
/// in the configuration).
public struct RetryLimits: Codable, Hashable, Sendable {
    /// Attempts that may fail in a row (without getting further into the file) before the job fails.
    public var maxAttempts: Int?
    /// Seconds from submission after which the job fails instead of trying again.
    public var maxTimeSeconds: Double?
    /// Seconds without a single byte after which an attempt is abandoned (and retried).
    public var idleTimeoutSeconds: Double?
    /// Bytes per second below which an attempt counts as stalled…
    public var lowSpeedBytesPerSecond: Int64?
    /// …when the rate stays below it for this many seconds.
    public var lowSpeedSeconds: Double?

    public init(
        maxAttempts: Int? = nil, maxTimeSeconds: Double? = nil, idleTimeoutSeconds: Double? = nil,
        lowSpeedBytesPerSecond: Int64? = nil, lowSpeedSeconds: Double? = nil
    ) {
        self.maxAttempts = maxAttempts
        self.maxTimeSeconds = maxTimeSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
        self.lowSpeedSeconds = lowSpeedSeconds
    }

    /// Whether no field is set.
    public var isEmpty: Bool { self == RetryLimits() }
}
