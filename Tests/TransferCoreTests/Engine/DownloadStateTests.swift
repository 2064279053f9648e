import Foundation
import Testing
@testable import TransferCore

/// Where a download is, and what moves it: a cancel or a stop from the core, back-pressure, the
/// attempt's own end, in each state; and what the core is told at once, by whoever claimed the end.
@Suite("Download state: cancel, stop, back-pressure and the own end in each state")
struct DownloadStateTests {
    typealias Holder = DownloadContext.EndClaim.Holder

    static let url = URL(string: "http://example.test/file")!

    func machine() -> DownloadMachine {
        DownloadMachine(
            attempt: DownloadAttempt(settings: .init(url: Self.url), offset: 0, totalBytes: nil, validator: nil, segmentBytes: 1 << 20),
            keptParts: [], connections: 1, now: 0)
    }

    /// A machine moved to `state` by the inputs that lead there.
    func machine(in state: DownloadMachine.State) -> DownloadMachine {
        var machine = machine()
        switch state {
        case .fetching: break
        case .backedUp: _ = machine.handle(.backlogHigh)
        case .closing(.cancelled): _ = machine.handle(.cancel)
        case .closing(.stopped(let reason)): _ = machine.handle(.stop(reason))
        case .held: _ = machine.ownEnd(granted: false)
        case .ending: _ = machine.ownEnd(granted: true)
        }
        #expect(machine.state == state)
        return machine
    }

    static let states: [DownloadMachine.State] = [.fetching, .backedUp, .closing(.cancelled), .closing(.stopped(.pause)), .held, .ending]

    @Test func theCoreIsAnsweredByWhoeverClaimedTheEnd() {
        #expect(Holder.open.cancelOutcome == .cancelled)
        #expect(Holder.cancel.cancelOutcome == .cancelled, "a second cancel")
        #expect(Holder.landing.cancelOutcome == .landing, "a landing transfer completes")
        #expect(Holder.own.cancelOutcome == .notRunning, "its own end is on its way")
        #expect(Holder.stop.cancelOutcome == .notRunning)
        #expect(Holder.open.stopOutcome == .stopping)
        #expect(Holder.landing.stopOutcome == .landing)
        for held in [Holder.own, .cancel, .stop] { #expect(held.stopOutcome == .notRunning, "the first end stands") }
    }

    @Test func theEndIsClaimedOnce() {
        let claim = DownloadContext.EndClaim()
        #expect(claim.take(.stop) == .open)
        #expect(claim.take(.cancel) == .stop)
        #expect(claim.take(.landing) == .stop)
        let landing = DownloadContext.EndClaim()
        #expect(landing.take(.landing) == .open)
        #expect(landing.take(.cancel) == .landing)
    }

    @Test func aCancelOrStopClosesARunningOrHeldBackTransferAndCancelsEveryRequest() {
        for state in [DownloadMachine.State.fetching, .backedUp] {
            var cancelled = machine(in: state)
            #expect(cancelled.handle(.cancel) == [.cancelRequests])
            #expect(cancelled.state == .closing(.cancelled))
            for reason in [StopReason.pause, .yield, .shutdown] {
                var stopped = machine(in: state)
                #expect(stopped.handle(.stop(reason)) == [.cancelRequests])
                #expect(stopped.state == .closing(.stopped(reason)))
            }
        }
    }

    @Test func aClosingTransferEndsOnceNothingIsInFlightAndTheFirstEndingStands() {
        var closing = machine(in: .closing(.stopped(.yield)))
        #expect(closing.handle(.cancel).isEmpty, "the first ending stands")
        #expect(closing.handle(.backlogHigh).isEmpty)
        #expect(closing.handle(.settled) == [.finish(.stopped(.yield))])
        #expect(closing.state == .ending)
        #expect(closing.handle(.settled).isEmpty, "it finishes once")
        var drained = machine(in: .closing(.cancelled))
        #expect(drained.handle(.drained) == [.finish(.cancelled)])
    }

    @Test func anOwnEndAfterTheCoreClaimedTheEndWaitsForItsCancelOrStop() {
        var held = machine()
        #expect(held.ownEnd(granted: false) == .held)
        #expect(held.handle(.settled).isEmpty, "nothing ends it but the input on its way")
        #expect(held.handle(.stop(.pause)) == [.cancelRequests, .finish(.stopped(.pause))])
        #expect(held.state == .ending)
        var heldForCancel = machine(in: .held)
        #expect(heldForCancel.handle(.cancel) == [.cancelRequests, .finish(.cancelled)])
        var closing = machine(in: .closing(.stopped(.shutdown)))
        #expect(closing.ownEnd(granted: false) == .finish(.stopped(.shutdown)), "a closing transfer ends as it was closed")
        var ended = machine(in: .ending)
        #expect(ended.ownEnd(granted: true) == .ignored)
        #expect(ended.handle(.cancel).isEmpty)
    }

    @Test func backPressureHoldsOnlyAFetchingTransferAndDrainingResumesIt() {
        var fetching = machine()
        #expect(fetching.handle(.backlogHigh) == [.cancelLeadRequest])
        #expect(fetching.state == .backedUp)
        #expect(fetching.handle(.backlogHigh).isEmpty)
        #expect(fetching.handle(.drained) == [.proceed])
        #expect(fetching.state == .fetching)
        #expect(fetching.handle(.settled).isEmpty, "a running transfer has nothing to finish")
        for state in Self.states where !state.isUnderWay {
            var other = machine(in: state)
            #expect(other.handle(.backlogHigh).isEmpty)
        }
    }

    @Test func onlyAFileToBeRemovedOrLandedDropsTheBytesStillArriving() {
        let kept = Self.states.filter(\.keepsBytes)
        #expect(kept == [.fetching, .backedUp, .closing(.stopped(.pause))])
    }
}
