import Foundation
import Testing
@testable import TransferCore
import TransferProtocol

/// What the attempt and its helper connections share: kept parts, starting helpers, where the
/// attempt's requests stop (only the machine sets it), and the attempt reaching the parts.
@Suite("Download machine: kept parts, helpers and where the attempt's requests stop")
struct DownloadMachineTests {
    let mib: Int64 = 1 << 20
    static let url = URL(string: "http://example.test/file")!

    /// A machine whose attempt at `offset` of a file of `total` bytes sent its first request and
    /// accepted a 206 for it.
    func answered(offset: Int64 = 0, total: Int64, kept: [ByteRange] = [], connections: Int = 4) -> DownloadMachine {
        let attempt = DownloadAttempt(
            settings: .init(url: Self.url), offset: offset, totalBytes: offset > 0 ? total : nil, validator: offset > 0 ? "\"v1\"" : nil,
            segmentBytes: 4 * mib)
        var machine = DownloadMachine(attempt: attempt, keptParts: kept, connections: connections, now: 0)
        var end = offset
        for case .send(let plan) in machine.attempt.proceed() {
            machine.requestSent(plan.range, now: 0)
            end = plan.range?.upperBound ?? total - 1
        }
        _ = machine.attempt.respond(.init(status: 206, contentRange: "bytes \(offset)-\(end)/\(total)", validator: "\"v1\""))
        return machine
    }

    @Test func keptPartsStopTheAttemptsRequestsAndTheHelpersStartWithThem() {
        var machine = answered(offset: 10 * mib, total: 64 * mib, kept: [ByteRange(start: 40 * mib, end: 50 * mib)])
        #expect(machine.attempt.rangeLimit == 40 * mib)
        #expect(machine.leadAsked == 14 * mib)
        let started1 = machine.startHelpers(paced: false, minimumSplit: mib)
        #expect(started1)
        #expect(machine.helpers?.plan.leadEnd == 40 * mib)
        #expect(machine.helpers?.bytesAhead == 10 * mib)
        #expect(machine.keptParts.isEmpty)
        // A kept part nobody fetches goes to the first helper.
        let started2 = machine.assignHelper(0)
        #expect(started2)
        #expect(machine.helpers?.plan.part(of: 0)?.start == 40 * mib)
        #expect(machine.attempt.rangeLimit == 40 * mib)
    }

    @Test func keptPartsThatDoNotMatchAreDroppedAndTheAttemptFetchesAlone() {
        // A kept range behind the offset: the plan drops it, so the limit it set does not match.
        var machine = answered(offset: 10 * mib, total: 64 * mib, kept: [ByteRange(start: 5 * mib, end: 8 * mib)])
        #expect(machine.attempt.rangeLimit == 5 * mib)
        let started3 = machine.startHelpers(paced: false, minimumSplit: mib)
        #expect(!started3)
        #expect(machine.attempt.rangeLimit == nil)
        #expect(machine.keptParts.isEmpty)
        #expect(machine.closeHelpers().isEmpty)
    }

    @Test func helpersNeedSeveralConnectionsARangedAnswerAndNoPace() {
        var one = answered(total: 64 * mib, connections: 1)
        let started4 = one.startHelpers(paced: false, minimumSplit: mib)
        #expect(!started4)
        var paced = answered(total: 64 * mib)
        let started5 = paced.startHelpers(paced: true, minimumSplit: mib)
        #expect(!started5)
        var whole = DownloadMachine(
            attempt: DownloadAttempt(settings: .init(url: Self.url), offset: 0, totalBytes: nil, validator: nil, segmentBytes: mib),
            keptParts: [], connections: 4, now: 0)
        _ = whole.attempt.proceed()
        _ = whole.attempt.respond(.init(status: 200, expectedContentLength: 64 * mib, validator: "\"v1\""))
        let started6 = whole.startHelpers(paced: false, minimumSplit: mib)
        #expect(!started6)
        #expect(whole.helpers == nil)
    }

    @Test func aHelpersPartStopsTheAttemptsRequestsWhereItBegins() {
        var machine = answered(total: 64 * mib)
        #expect(machine.attempt.rangeLimit == nil)
        let started7 = machine.startHelpers(paced: false, minimumSplit: mib)
        #expect(started7)
        #expect(machine.leadFrom == 4 * mib)
        let started8 = machine.assignHelper(0)
        #expect(started8)
        #expect(machine.attempt.rangeLimit == 34 * mib)
        let started9 = machine.assignHelper(1)
        #expect(started9)
        #expect(machine.attempt.rangeLimit == 19 * mib)
    }

    @Test func theAttemptWaitsForAPartThenTakesItIntoTheDigestAndGoesOn() {
        var machine = answered(total: 8 * mib)
        _ = machine.startHelpers(paced: false, minimumSplit: mib)
        _ = machine.assignHelper(0)
        // The lead asked for 0..<4 MiB: the helper takes the second half of the rest.
        #expect(machine.attempt.rangeLimit == 6 * mib)
        #expect(machine.position() == .own)
        machine.attempt.wrote(Int(6 * mib))
        #expect(machine.position() == .atParts)
        #expect(machine.reachedPart() == .wait)
        // The helper fetches its whole part.
        guard case .send(let range) = machine.helpers?.next(0, rangeBytes: 4 * mib, backlogHigh: false) else {
            Issue.record("no helper request")
            return
        }
        let answer = machine.helperAnswered(0, .init(status: 206, contentRange: "bytes \(range.lowerBound)-\(range.upperBound)/\(8 * mib)", validator: "\"v1\""))
        #expect(answer == .accept)
        _ = machine.helpers?.wrote(0, 2 * mib, backlogHigh: false)
        #expect(machine.reachedPart() == .absorb(ByteRange(start: 6 * mib, end: 8 * mib)))
        #expect(machine.helpers?.bytesAhead == 2 * mib, "the part being absorbed is still ahead of the offset")
        #expect(machine.leadFrom == 8 * mib)
        #expect(machine.attempt.rangeLimit == 8 * mib)
        machine.absorbed(to: 8 * mib)
        #expect(machine.attempt.offset == 8 * mib)
        #expect(machine.helpers?.absorbing == nil)
        #expect(machine.reachedPart() == .finished)
    }

    @Test func anAttemptPastThePartsOrAMisplacedPartClosesTheHelpers() {
        var lost = answered(total: 64 * mib)
        _ = lost.startHelpers(paced: false, minimumSplit: mib)
        _ = lost.assignHelper(0)
        lost.attempt.wrote(Int(35 * mib))
        #expect(lost.position() == .lostTrack(leadEnd: 34 * mib))
        #expect(lost.helpers?.isClosed == true)
        #expect(lost.attempt.rangeLimit == nil)
        #expect(lost.position() == .own)

        var misplaced = answered(total: 8 * mib)
        _ = misplaced.startHelpers(paced: false, minimumSplit: mib)
        _ = misplaced.assignHelper(0)
        misplaced.helpers?.retire(0)
        // The part is nobody's: the attempt may take it, but it stands at 0, not at the part.
        #expect(misplaced.reachedPart() == .misplaced(ByteRange(start: 6 * mib, end: 6 * mib)))
        #expect(misplaced.helpers?.isClosed == true)
        #expect(misplaced.attempt.rangeLimit == nil)
    }

    @Test func startingOverForgetsPartsHelpersAndTheLimit() {
        var machine = answered(offset: 10 * mib, total: 64 * mib, kept: [ByteRange(start: 40 * mib, end: 50 * mib)])
        _ = machine.startHelpers(paced: false, minimumSplit: mib)
        _ = machine.assignHelper(0)
        machine.startedOver()
        #expect(machine.helpers?.isClosed == true)
        #expect(machine.keptParts.isEmpty)
        #expect(machine.attempt.rangeLimit == nil)
        #expect(machine.closeHelpers().isEmpty)
    }
}

extension DownloadMachineTests {
    @Test func checkpointsCountAndRecordTheHelpersBytesWhileTheyAreOpen() {
        var machine = answered(total: 8 * mib)
        _ = machine.startHelpers(paced: false, minimumSplit: mib)
        _ = machine.assignHelper(0)
        machine.attempt.wrote(Int(mib))
        guard case .send(let range) = machine.helpers?.next(0, rangeBytes: mib, backlogHigh: false) else {
            Issue.record("no helper request")
            return
        }
        _ = machine.helperAnswered(0, .init(status: 206, contentRange: "bytes \(range.lowerBound)-\(range.upperBound)/\(8 * mib)", validator: "\"v1\""))
        _ = machine.helpers?.wrote(0, mib / 2, backlogHigh: false)
        #expect(machine.progress == mib + mib / 2)
        let parts = machine.checkpointParts
        #expect(parts == [ByteRange(start: 6 * mib, end: 6 * mib + mib / 2)])
        machine.checkpointStarted(parts)
        _ = machine.helpers?.wrote(0, mib / 2, backlogHigh: false)
        // Stopping: what the helpers fetched when the file was synced, else what the checkpoint recorded.
        let closed = machine.closeHelpers()
        #expect(closed == [ByteRange(start: 6 * mib, end: 7 * mib)])
        #expect(machine.partsKept(closed: closed, synced: true) == closed)
        #expect(machine.partsKept(closed: closed, synced: false) == parts)
        // Closed helpers count and record nothing more.
        #expect(machine.progress == mib)
        #expect(machine.checkpointParts.isEmpty)
    }

    @Test func withoutHelpersAStopKeepsThePartsKeptBefore() {
        let kept = [ByteRange(start: 40 * mib, end: 50 * mib)]
        var machine = answered(offset: 10 * mib, total: 64 * mib, kept: kept)
        #expect(machine.progress == 10 * mib)
        #expect(machine.checkpointParts.isEmpty)
        let closed = machine.closeHelpers()
        #expect(closed == kept)
        #expect(machine.partsKept(closed: closed, synced: false) == kept)
    }
}

extension DownloadMachineTests {
    @Test func onlyARangedAnswerWithAValidatorMayBeHeldBackAndContinued() {
        #expect(answered(total: 8 * mib).attempt.continuesWithRange)
        var unvalidated = DownloadMachine(
            attempt: DownloadAttempt(settings: .init(url: Self.url), offset: 0, totalBytes: nil, validator: nil, segmentBytes: mib),
            keptParts: [], connections: 1, now: 0)
        _ = unvalidated.attempt.proceed()
        #expect(!unvalidated.attempt.continuesWithRange, "no answer yet")
        _ = unvalidated.attempt.respond(.init(status: 200, expectedContentLength: 8 * mib, validator: "\"v1\""))
        #expect(!unvalidated.attempt.continuesWithRange, "a 200 is the whole file, from byte 0")
    }
}
