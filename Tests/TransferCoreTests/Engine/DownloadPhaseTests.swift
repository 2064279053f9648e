import Testing
@testable import TransferCore

/// A cancel or a stop from the core, in each phase of a download: what the core is told and the
/// phase the transfer moves to.
@Suite("Download phase: cancel and stop in each phase")
struct DownloadPhaseTests {
    typealias Phase = DownloadContext.Phase

    func decided<Outcome: Equatable>(_ decision: (outcome: Outcome, next: Phase?), _ outcome: Outcome, _ next: Phase?) -> Bool {
        decision.outcome == outcome && decision.next == next
    }

    @Test func aCancelEndsARunningOrHeldBackTransferOnly() {
        for phase in [Phase.active, .backedUp] {
            #expect(decided(phase.cancelled(), .cancelled, .cancelling))
        }
        #expect(decided(Phase.landing.cancelled(), .landing, nil), "a landing transfer completes")
        #expect(decided(Phase.cancelling.cancelled(), .cancelled, nil))
        #expect(decided(Phase.stopping(.pause).cancelled(), .notRunning, nil))
    }

    @Test func aStopKeepsItsReasonAndNeverReplacesAnotherEnding() {
        for phase in [Phase.active, .backedUp] {
            for reason in [StopReason.pause, .yield, .shutdown] {
                #expect(decided(phase.stopped(reason), .stopping, .stopping(reason)))
            }
        }
        #expect(decided(Phase.landing.stopped(.pause), .landing, nil))
        #expect(decided(Phase.cancelling.stopped(.shutdown), .notRunning, nil))
        #expect(decided(Phase.stopping(.pause).stopped(.shutdown), .notRunning, nil), "the first reason stands")
    }

    @Test func endingMovesOnlyWhenAPhaseWasDecided() {
        var control = DownloadContext.Control()
        let stays = control.end(in: nil)
        #expect(!stays)
        #expect(control.phase == .active)
        let moves = control.end(in: .stopping(.yield))
        #expect(moves)
        #expect(control.phase == .stopping(.yield))
    }
}
