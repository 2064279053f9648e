import Testing
@testable import TransferCore

/// The pacing arithmetic with made-up clock readings: the wait after a segment makes the bytes fit
/// the rate, a slow stretch banks only a little time, and no limit means no wait.
@Suite("Rate pacer")
struct RatePacerTests {
    let second: UInt64 = 1_000_000_000
    let start: UInt64 = 1_000_000_000_000

    @Test func waitsUntilTheSegmentFitsTheRate() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        // 256 KiB at 1 MiB/s take a quarter second; the request took 10 ms.
        let wait = pacer.delay(endedAt: 256 << 10, now: start + second / 100, rate: 1 << 20)
        #expect(wait == second / 4 - second / 100)
    }

    @Test func heldRateOverManySegmentsIsExact() {
        var pacer = RatePacer()
        var now = start
        var offset: Int64 = 0
        for _ in 0..<40 {
            // Each request is sent a little late (timer jitter) and takes 20 ms.
            now += 3_000_000
            pacer.requestSent(at: now, offset: offset)
            offset += 512 << 10
            now += 20_000_000
            now += pacer.delay(endedAt: offset, now: now, rate: 2 << 20)
        }
        // 40 segments of 512 KiB at 2 MiB/s: 10 s, and the jitter does not add up.
        let elapsed = Double(now - start) / 1e9
        #expect(abs(elapsed - 10) < 0.01)
    }

    @Test func noLimitMeansNoWait() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        #expect(pacer.delay(endedAt: 64 << 20, now: start + 1, rate: nil) == 0)
        #expect(pacer.nextSend == nil)
    }

    @Test func aSlowServerBanksOnlyTheSlack() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        // The server took 5 s for what the rate allows in 1 s: no wait.
        #expect(pacer.delay(endedAt: 1 << 20, now: start + 5 * second, rate: 1 << 20) == 0)
        // The next segment is fast: it may run only the slack ahead of the rate, not 4 s.
        pacer.requestSent(at: start + 5 * second, offset: 1 << 20)
        let wait = pacer.delay(endedAt: 2 << 20, now: start + 5 * second + second / 10, rate: 1 << 20)
        #expect(wait == second - RatePacer.slackNanoseconds - second / 10)
    }

    @Test func requestsWithinOneSegmentCountTogether() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        // A redirect or a continuation after the disk caught up sends again mid-segment.
        pacer.requestSent(at: start + second / 10, offset: 100)
        #expect(pacer.delay(endedAt: 1 << 20, now: start + second / 5, rate: 1 << 20) == second - second / 5)
    }

    @Test func aLowerRateLengthensTheNextWait() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        _ = pacer.delay(endedAt: 1 << 20, now: start, rate: 4 << 20)
        pacer.requestSent(at: start + second / 4, offset: 1 << 20)
        #expect(pacer.delay(endedAt: 2 << 20, now: start + second / 4, rate: 1 << 20) == second)
    }

    @Test func aRaisedRateBringsTheWaitForward() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        // 1 MiB at 1 MiB/s: the next request may go a second after the first.
        let due = start + pacer.delay(endedAt: 1 << 20, now: start, rate: 1 << 20)
        #expect(due == start + second)
        // Raised to 4 MiB/s while it waits: a quarter second after the first.
        #expect(pacer.due(due, at: 4 << 20) == start + second / 4)
        #expect(pacer.nextSend == start + second / 4)
    }

    @Test func aLoweredOrUnchangedRateKeepsTheWait() {
        var pacer = RatePacer()
        pacer.requestSent(at: start, offset: 0)
        let due = start + pacer.delay(endedAt: 1 << 20, now: start, rate: 1 << 20)
        // A lowered limit holds from the next segment on; no limit is the caller's to see.
        #expect(pacer.due(due, at: 1 << 19) == due)
        #expect(pacer.due(due, at: 1 << 20) == due)
        #expect(pacer.due(due, at: nil) == due)
        #expect(pacer.nextSend == due)
    }

    @Test func segmentsHoldAQuarterSecondWithinBounds() {
        #expect(RatePacer.segmentBytes(for: nil, upTo: 16 << 20) == nil)
        #expect(RatePacer.segmentBytes(for: 1 << 20, upTo: 16 << 20) == 256 << 10)
        #expect(RatePacer.segmentBytes(for: 1024, upTo: 16 << 20) == 16 << 10)
        #expect(RatePacer.segmentBytes(for: 1 << 30, upTo: 16 << 20) == 16 << 20)
    }
}
