import Foundation
import Testing
import TransferProtocol
@testable import TransferCore

/// Event numbering and the order events leave in, as a value.
@Suite struct EventOutboxTests {
    func event(_ seq: UInt64) -> JobEvent {
        JobEvent(seq: seq, type: .progress, time: Date(), job: Job(id: "j", state: .running, url: "http://h/x", destination: "/tmp/x", createdAt: Date(), owner: 1))
    }

    @Test func numberingContinuesAfterTheLastAndReservesABlockAhead() {
        var outbox = EventOutbox(after: 41)
        #expect(outbox.reservedSeq == 41 + EventOutbox.block)
        let first = outbox.next()
        #expect(first.seq == 42 && first.reservation == nil)
    }

    @Test func aNewReservationIsAskedForWhenHalfTheBlockIsUsed() {
        var outbox = EventOutbox(after: 0)
        var reservations: [UInt64] = []
        for _ in 0..<(EventOutbox.block / 2 + 1) {
            if let reservation = outbox.next().reservation { reservations.append(reservation) }
        }
        #expect(reservations == [outbox.lastSeq + EventOutbox.block])
        #expect(outbox.lastSeq == EventOutbox.block / 2 + 1)
    }

    @Test func eventsLeaveInBatchesInOrderAndOneDrainRunsAtATime() {
        var outbox = EventOutbox(after: 0)
        let starts = outbox.enqueue(event(1))
        #expect(starts, "the first event starts a drain")
        let startsAgain = outbox.enqueue(event(2))
        #expect(!startsAgain, "the drain under way takes the next")
        let first = outbox.nextBatch()
        #expect(first?.events.map(\.seq) == [1, 2])
        let whilePublishing = outbox.enqueue(event(3))
        #expect(!whilePublishing, "queued while the batch is published: the same drain takes it")
        let second = outbox.nextBatch()
        #expect(second?.events.map(\.seq) == [3])
        let none = outbox.nextBatch()
        #expect(none == nil)
        #expect(!outbox.isDraining)
        let after = outbox.enqueue(event(4))
        #expect(after, "after the drain ended, a new one starts")
    }

    @Test func copiesToFreeGoWithTheNextBatchAfterASync() {
        var outbox = EventOutbox(after: 0)
        let starts = outbox.free("copy-1")
        #expect(starts, "a copy alone starts a drain")
        let progress = outbox.nextBatch()
        #expect(progress?.copies == ["copy-1"] && progress?.events.isEmpty == true)
        #expect(progress?.needsSync == true, "a copy is freed only once the journal holds its job's end")
        #expect(outbox.nextBatch() == nil && !outbox.isDraining)

        _ = outbox.enqueue(event(1))
        let alone = outbox.nextBatch()
        #expect(alone?.needsSync == false, "progress alone waits for no sync")
        _ = outbox.nextBatch()
        _ = outbox.enqueue(event(2))
        let joins = outbox.free("copy-2")
        #expect(!joins, "the drain under way takes the copy with the event")
        let both = outbox.nextBatch()
        #expect(both?.events.map(\.seq) == [2] && both?.copies == ["copy-2"] && both?.needsSync == true)

        _ = outbox.free("copy-3")
        #expect(outbox.copiesBeforeSync == ["copy-2", "copy-3"], "a subscriber's sync frees the batch's copies and the queued ones")
        #expect(outbox.nextBatch()?.copies == ["copy-3"], "the drain still frees the queued copy after its own sync")
    }
}
