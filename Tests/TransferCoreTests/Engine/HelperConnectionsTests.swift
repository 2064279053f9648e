import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// The helper connections' decisions, one input at a time: which answers bring bytes of the file
/// (the attempt's rules), where their bytes go, how a request's end is taken, and closing.
@Suite("Helper connections: answers, bytes, endings, back-pressure")
struct HelperConnectionsTests {
    let mib: Int64 = 1 << 20
    static let url = URL(string: "http://example.test/file")!

    /// An attempt that accepted a 206 of a 64 MiB file with a validator, as helpers start after.
    func attempt(coding: String? = nil) -> DownloadAttempt {
        var attempt = DownloadAttempt(
            settings: .init(url: Self.url), offset: 0, totalBytes: nil, validator: nil, segmentBytes: 4 * mib)
        _ = attempt.proceed()
        _ = attempt.respond(.init(status: 206, contentEncoding: coding, contentRange: "bytes 0-\(4 * mib - 1)/\(64 * mib)", validator: "\"v1\""))
        return attempt
    }

    /// Helpers for a 64 MiB file with one helper given a part and its first range asked for (`task` 7).
    func started(width: Int = 3) -> (HelperConnections, range: ClosedRange<Int64>) {
        var helpers = HelperConnections(plan: SegmentPlan(total: 64 * mib, prefix: 0, kept: [], minimumSplit: mib), width: width)
        #expect(helpers.roomForHelper == 0)
        let taken = helpers.assign(0, leadFrom: 4 * mib)
        #expect(taken)
        guard case .send(let range) = helpers.next(0, rangeBytes: 4 * mib, backlogHigh: false) else {
            Issue.record("no request")
            return (helpers, 0...0)
        }
        helpers.sent(0, task: 7)
        return (helpers, range)
    }

    func answer(_ range: ClosedRange<Int64>, status: Int = 206, total: Int64? = nil, validator: String? = "\"v1\"", coding: String? = nil)
        -> DownloadAttempt.Response
    {
        .init(
            status: status, contentEncoding: coding,
            contentRange: "bytes \(range.lowerBound)-\(range.upperBound)/\(total ?? 64 * mib)", validator: validator)
    }

    @Test func aHelperAsksForTheFirstRangeOfTheSecondHalfAndItsTaskIsKnown() {
        let (helpers, range) = started()
        #expect(range == 34 * mib...(38 * mib - 1))
        #expect(helpers.plan.leadEnd == 34 * mib)
        #expect(helpers.worker(ofTask: 7) == 0)
        #expect(helpers.roomForHelper == 1)
    }

    @Test func onlyTheExactRangeOfTheSameVersionIsAccepted() {
        let attempt = attempt()
        let (fresh, range) = started()
        var helpers = fresh
        #expect(helpers.answer(0, .init(status: 100), attempt: attempt) == .interim)
        #expect(helpers.placement(0, count: 100) == nil, "no byte is the file's before the answer is checked")
        #expect(helpers.answer(0, answer(range), attempt: attempt) == .accept)
        #expect(helpers.placement(0, count: 100)?.at == 34 * mib)
        #expect(helpers.placement(0, count: 100)?.count == 100)
        // Each row that does not fit refuses all helpers.
        let misfits: [DownloadAttempt.Response] = [
            answer(range, status: 200), answer(range.lowerBound...(range.upperBound - 1)), answer((range.lowerBound + 1)...range.upperBound),
            answer(range, total: 65 * mib), answer(range, validator: "\"v2\""), answer(range, validator: nil), answer(range, coding: "gzip"),
            .init(status: 206, contentLength: "10, 11", contentRange: "bytes \(range.lowerBound)-\(range.upperBound)/\(64 * mib)", validator: "\"v1\""),
        ]
        for misfit in misfits {
            var refused = fresh
            #expect(refused.answer(0, misfit, attempt: attempt) == .refuse, "\(misfit)")
            #expect(refused.state == .refused)
            #expect(refused.roomForHelper == nil, "no new helper starts")
        }
        // The attempt's own content coding is the file's.
        var coded = fresh
        #expect(coded.answer(0, answer(range, coding: "gzip"), attempt: self.attempt(coding: "gzip")) == .accept)
    }

    @Test func aTransientStatusEndsThatHelperOnly() {
        var (helpers, range) = started()
        #expect(helpers.answer(0, answer(range, status: 503), attempt: attempt()) == .cancel)
        #expect(helpers.state == .fetching)
        #expect(helpers.ended(0, task: 7, failed: false, underWay: true) == .retired(replace: true))
        #expect(helpers.worker(ofTask: 7) == nil)
        #expect(helpers.plan.part(of: 0) == nil, "its part is left to the lead or another helper")
    }

    @Test func aHelperWithItsRangeDoneAsksForTheNextThenTakesAnotherPart() {
        var (helpers, range) = started()
        _ = helpers.answer(0, answer(range), attempt: attempt())
        let taken = helpers.wrote(0, 4 * mib, backlogHigh: false)
        #expect(!taken)
        #expect(helpers.placement(0, count: 100) == nil, "past its range")
        #expect(helpers.bytesAhead == 4 * mib)
        #expect(helpers.ended(0, task: 7, failed: false, underWay: true) == .next)
        #expect(helpers.next(0, rangeBytes: 4 * mib, backlogHigh: false) == .send(38 * mib...(42 * mib - 1)))
        helpers.sent(0, task: 8)
        _ = helpers.answer(0, answer(38 * mib...(42 * mib - 1)), attempt: attempt())
        // The rest of the part in one go: the part is finished and the helper free.
        _ = helpers.wrote(0, 4 * mib, backlogHigh: false)
        for _ in 0..<6 {
            let asked = helpers.next(0, rangeBytes: 4 * mib, backlogHigh: false)
            guard case .send(let range) = asked else { break }
            _ = helpers.answer(0, answer(range), attempt: attempt())
            _ = helpers.wrote(0, Int64(range.count), backlogHigh: false)
        }
        #expect(helpers.plan.part(of: 0) == nil)
        #expect(helpers.ended(0, task: 8, failed: false, underWay: true) == .takeAnother)
    }

    @Test func aFailedOrShortRequestRetiresTheHelperAndIsReplacedAFewTimes() {
        var (helpers, range) = started(width: 1)
        _ = helpers.answer(0, answer(range), attempt: attempt())
        _ = helpers.wrote(0, mib, backlogHigh: false)
        #expect(helpers.ended(0, task: 7, failed: true, underWay: true) == .retired(replace: true))
        #expect(helpers.failures == 1)
        #expect(helpers.plan.leadMayGoOn, "the lead may take the part on")
        // Two failures per helper are replaced, the third is not.
        for (index, replace) in [true, false].enumerated() {
            let taken = helpers.assign(index + 1, leadFrom: 4 * mib)
            #expect(taken)
            _ = helpers.next(index + 1, rangeBytes: 4 * mib, backlogHigh: false)
            helpers.sent(index + 1, task: 20 + index)
            #expect(helpers.ended(index + 1, task: 20 + index, failed: false, underWay: true) == .retired(replace: replace), "not accepted")
        }
    }

    @Test func backPressureCancelsOnceAndTheHelperContinuesAfterTheDrain() {
        var (helpers, range) = started()
        _ = helpers.answer(0, answer(range), attempt: attempt())
        let cancels = helpers.wrote(0, mib, backlogHigh: true)
        #expect(cancels, "its request is cancelled")
        let cancelsAgain = helpers.wrote(0, mib, backlogHigh: true)
        #expect(!cancelsAgain, "once")
        #expect(helpers.placement(0, count: 10) != nil, "bytes still on their way are written")
        // Cancelled, with its range unfinished: it continues once the backlog drained.
        #expect(helpers.ended(0, task: 7, failed: true, underWay: true) == .resumeWhenDrained)
        #expect(helpers.waitsForDrain(0))
        // Still high: it waits again, without a request.
        #expect(helpers.next(0, rangeBytes: 4 * mib, backlogHigh: true) == .waitForDrain)
        #expect(helpers.next(0, rangeBytes: 4 * mib, backlogHigh: false) == .send(36 * mib...(40 * mib - 1)))
        // A helper stopped for the backlog just as its range was complete ended well.
        var (complete, first) = started()
        _ = complete.answer(0, answer(first), attempt: attempt())
        let taken = complete.wrote(0, 4 * mib, backlogHigh: true)
        #expect(taken)
        #expect(complete.ended(0, task: 7, failed: true, underWay: true) == .next)
    }

    @Test func aStoppedTransferRetiresItsHelpersAndClosingDropsTheirBytes() {
        var (helpers, range) = started()
        _ = helpers.answer(0, answer(range), attempt: attempt())
        _ = helpers.wrote(0, mib, backlogHigh: false)
        var stopped = helpers
        #expect(stopped.ended(0, task: 7, failed: true, underWay: false) == .retired(replace: false))
        #expect(stopped.failures == 0)
        #expect(helpers.close() == [ByteRange(start: 34 * mib, end: 35 * mib)])
        #expect(helpers.close() == nil, "once")
        #expect(helpers.placement(0, count: 10) == nil)
        #expect(helpers.worker(ofTask: 7) == 0, "its callbacks are still told apart from the attempt's")
        #expect(helpers.ended(0, task: 7, failed: true, underWay: true) == .none)
        #expect(helpers.worker(ofTask: 7) == nil)
        #expect(helpers.next(0, rangeBytes: mib, backlogHigh: false) == .retired)
        #expect(helpers.roomForHelper == nil)
    }

    @Test func aWriteFailureStopsNewHelpers() {
        var (helpers, _) = started()
        helpers.writeFailed()
        #expect(helpers.state == .refused)
        #expect(helpers.roomForHelper == nil)
    }
}
