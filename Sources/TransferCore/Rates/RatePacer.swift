/// Holds one transfer to a rate by spacing its segments: after a segment, the next ranged request
/// waits until the bytes fetched so far fit the rate. FoundationNetworking cannot throttle libcurl
/// and `suspend()` restarts a request from byte 0, so the wait falls between requests, never inside
/// one. A value: it reads no clock (the engine passes the monotonic clock's readings in).
struct RatePacer: Sendable, Equatable {
    /// Time a slow stretch (a server slower than the limit) may bank: the next segments may then
    /// run this far ahead of the rate, so a short stall is made up but a long one is not.
    static let slackNanoseconds: UInt64 = 200_000_000
    /// A paced segment holds about this much of a second's worth of the rate: short enough that
    /// the rate seen over a few seconds is even, long enough that requests stay few.
    static let segmentSeconds = 0.25
    /// The smallest paced segment: one chunk of FoundationNetworking.
    static let smallestSegment: Int64 = 16 << 10

    /// When the next segment may be sent, once a segment was paced.
    private(set) var nextSend: UInt64?
    /// When the bytes not yet paced began to be asked for, and the offset then.
    private(set) var pendingSince: UInt64?
    private(set) var pendingOffset: Int64 = 0
    /// Where the time of the segment paced last began, and its bytes: to time it again when the
    /// rate changes while the next request waits.
    private var pacedStart: UInt64 = 0
    private var pacedBytes: Int64 = 0

    /// A request was sent at `now` from `offset`. A request sent while earlier bytes are still
    /// unpaced (a redirect, a continuation after the disk caught up) keeps counting from them.
    mutating func requestSent(at now: UInt64, offset: Int64) {
        guard pendingSince == nil else { return }
        pendingSince = now
        pendingOffset = offset
    }

    /// A segment ended with the file at `offset`: returns the nanoseconds to wait before the next
    /// request so that the bytes fit `rate` (bytes per second; nil: no limit, no wait).
    mutating func delay(endedAt offset: Int64, now: UInt64, rate: Int64?) -> UInt64 {
        defer { pendingSince = nil }
        guard let rate, rate > 0, let since = pendingSince else {
            nextSend = nil
            return 0
        }
        let bytes = max(0, offset - pendingOffset)
        let earliest = since > Self.slackNanoseconds ? since - Self.slackNanoseconds : 0
        let start = max(nextSend ?? since, earliest)
        let due = start + UInt64((Double(bytes) * 1e9 / Double(rate)).rounded())
        nextSend = due
        pacedStart = start
        pacedBytes = bytes
        return due > now ? due - now : 0
    }

    /// When the next request may go out at `rate`, for a wait that `delay` timed for `due`: sooner
    /// when the limit was raised meanwhile, else `due` (a lowered limit holds from the next segment).
    mutating func due(_ due: UInt64, at rate: Int64?) -> UInt64 {
        guard let rate, rate > 0, nextSend == due else { return due }
        let sooner = pacedStart + UInt64((Double(pacedBytes) * 1e9 / Double(rate)).rounded())
        guard sooner < due else { return due }
        nextSend = sooner
        return sooner
    }

    /// The segment size for `rate` (nil: no limit, the engine's own sizing), within `bounds`'
    /// upper end and at least one chunk.
    static func segmentBytes(for rate: Int64?, upTo largest: Int64) -> Int64? {
        guard let rate, rate > 0 else { return nil }
        let bytes = Int64((Double(rate) * segmentSeconds).rounded())
        return min(max(bytes, smallestSegment), max(largest, smallestSegment))
    }
}
