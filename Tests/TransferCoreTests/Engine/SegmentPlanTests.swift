import Testing
@testable import TransferCore

@Suite("SegmentPlan: sharing one file out between connections")
struct SegmentPlanTests {
    let mib: Int64 = 1 << 20

    @Test func helpersSplitTheLargestRangeLeftInHalves() {
        var plan = SegmentPlan(total: 64 * mib, prefix: 0, kept: [], minimumSplit: mib)
        #expect(plan.leadEnd == 64 * mib)
        // The lead asked for its first 4 MiB: the first helper takes the second half of the rest.
        #expect(plan.assign(1, leadFrom: 4 * mib) == 34 * mib)
        #expect(plan.leadEnd == 34 * mib)
        // Then the larger of the lead's 4..<34 MiB and the helper's 34..<64 MiB: the lead's (30 MiB each, first found).
        #expect(plan.assign(2, leadFrom: 4 * mib) == 19 * mib)
        #expect(plan.leadEnd == 19 * mib)
        #expect(plan.assign(3, leadFrom: 4 * mib) == 49 * mib)
        #expect(plan.parts.map(\.start) == [19 * mib, 34 * mib, 49 * mib])
        #expect(plan.parts.map(\.end) == [34 * mib, 49 * mib, 64 * mib])
        // The parts cover the rest of the file without gaps.
        for (part, next) in zip(plan.parts, plan.parts.dropFirst()) { #expect(part.end == next.start) }
    }

    @Test func aSplitNeverCutsBelowWhatWasAskedForAndStopsAtTheMinimum() {
        var plan = SegmentPlan(total: 4 * mib, prefix: 0, kept: [], minimumSplit: mib)
        // Only 4 MiB left past a request for 1 MiB: 3 MiB is too little to split in two of 1 MiB or more? It is not.
        #expect(plan.assign(1, leadFrom: 1 * mib) != nil)
        let helperStart = plan.parts[0].start
        #expect(helperStart >= 1 * mib + mib / 2 && helperStart % 65_536 == 0)
        // The helper asked for all of its part; the lead's rest is under two minimum splits.
        plan.asked(helperStart, upTo: 4 * mib)
        #expect(plan.assign(2, leadFrom: 1 * mib) == nil)
    }

    @Test func theLeadTakesFinishedPartsAndWaitsForRunningOnes() {
        var plan = SegmentPlan(total: 8 * mib, prefix: 0, kept: [], minimumSplit: mib)
        let start = plan.assign(1, leadFrom: 0)!
        #expect(start == 4 * mib)
        plan.wrote(start, mib)
        #expect(!plan.leadMayGoOn)
        #expect(plan.leadArrived() == .wait, "the part's helper is still fetching")
        #expect(plan.bytesAhead == mib)
        #expect(plan.ranges == [ByteRange(start: 4 * mib, end: 5 * mib)])
        plan.wrote(start, 3 * mib)
        // What the helper wakes the waiting lead on.
        #expect(plan.leadMayGoOn)
        #expect(plan.parts[0].isFinished)
        #expect(plan.part(of: 1) == nil, "the helper is free for another part")
        #expect(plan.leadArrived() == .absorb(ByteRange(start: 4 * mib, end: 8 * mib)))
        #expect(plan.leadEnd == 8 * mib)
        #expect(plan.leadArrived() == .finished)
    }

    @Test func aReleasedPartIsTakenByTheLeadFromWhereItStopped() {
        var plan = SegmentPlan(total: 8 * mib, prefix: 0, kept: [], minimumSplit: mib)
        let start = plan.assign(1, leadFrom: 0)!
        plan.wrote(start, mib)
        #expect(!plan.leadMayGoOn)
        plan.release(1)
        #expect(plan.leadMayGoOn)
        #expect(plan.leadArrived() == .absorb(ByteRange(start: start, end: start + mib)))
        // The lead goes on fetching the rest of that part itself.
        #expect(plan.leadEnd == 8 * mib)
        #expect(plan.parts.isEmpty)
    }

    @Test func aReleasedPartGoesToTheNextHelperBeforeAnySplit() {
        var plan = SegmentPlan(total: 64 * mib, prefix: 0, kept: [], minimumSplit: mib)
        let first = plan.assign(1, leadFrom: 0)!
        plan.wrote(first, mib)
        plan.release(1)
        #expect(plan.assign(2, leadFrom: 0) == first)
        #expect(plan.part(of: 2)?.done == first + mib)
    }

    @Test func rangesKeptByARestartBecomePartsNobodyFetchesYet() {
        let kept = [ByteRange(start: 40 * mib, end: 44 * mib), ByteRange(start: 20 * mib, end: 22 * mib)]
        var plan = SegmentPlan(total: 64 * mib, prefix: 10 * mib, kept: kept, minimumSplit: mib)
        #expect(plan.leadEnd == 20 * mib)
        #expect(plan.parts.map { [$0.start, $0.done, $0.end] } == [[20 * mib, 22 * mib, 40 * mib], [40 * mib, 44 * mib, 64 * mib]])
        #expect(plan.ranges == kept.reversed())
        // Helpers continue them where they stopped before splitting anything.
        #expect(plan.assign(1, leadFrom: 12 * mib) == 20 * mib)
        #expect(plan.assign(2, leadFrom: 12 * mib) == 40 * mib)
    }

    @Test func keptRangesThatOverlapTheOffsetOrEachOtherOrPassTheEndAreDropped() {
        let kept = [
            ByteRange(start: 5 * mib, end: 12 * mib), ByteRange(start: 30 * mib, end: 34 * mib),
            ByteRange(start: 32 * mib, end: 36 * mib), ByteRange(start: 60 * mib, end: 70 * mib),
        ]
        let plan = SegmentPlan(total: 64 * mib, prefix: 10 * mib, kept: kept, minimumSplit: mib)
        #expect(plan.ranges == [ByteRange(start: 30 * mib, end: 34 * mib)])
        #expect(plan.leadEnd == 30 * mib)
    }
}
