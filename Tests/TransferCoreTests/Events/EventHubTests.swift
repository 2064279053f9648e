import Foundation
import Synchronization
import Testing
import TransferProtocol
@testable import TransferCore

@Suite("Event hub")
struct EventHubTests {
    private func event(_ seq: UInt64, _ type: JobEventType = .progress, id: String = "j") -> JobEvent {
        JobEvent(seq: seq, type: type, time: Date(), job: Job(id: id, state: .running, url: "http://h/x", destination: "/tmp/x", createdAt: Date(), owner: 1))
    }

    private func events(of subscription: Subscription, count: Int) async -> [SubscriptionItem] {
        var items: [SubscriptionItem] = []
        while items.count < count, let item = await subscription.next() { items.append(item) }
        return items
    }

    @Test func replayComesFirstInOrderThenCaughtUpThenLiveEventsWithoutRepeats() async {
        let hub = EventHub()
        let subscription = Subscription(
            id: 1, limit: 10, startSeq: 7, replay: [event(5, .completed), event(3, .failed)], filter: { $0.job.id == "j" })
        hub.add(subscription)
        hub.publish(event(5, .completed))  // still on its way out of the core when the replay was taken
        hub.publish(event(8))
        hub.publish(event(9, id: "other"))
        let items = await events(of: subscription, count: 4)
        guard items.count == 4, case .event(let first) = items[0], case .event(let second) = items[1],
            case .caughtUp(let caughtUp) = items[2], case .event(let live) = items[3]
        else {
            Issue.record("unexpected items: \(items)")
            return
        }
        #expect([first.seq, second.seq] == [3, 5])
        #expect(caughtUp == CaughtUp(subscription: 1, replayed: 2, seq: 7))
        #expect(live.seq == 8)
    }

    @Test func aFullQueueEndsTheSubscriptionAndFreesIt() async {
        let hub = EventHub()
        let subscription = Subscription(id: 1, limit: 3, startSeq: 0, replay: [], filter: { _ in true })
        let overflowed = OverflowFlag()
        subscription.onOverflow { overflowed.set($0) }
        hub.add(subscription)
        for seq in 1...4 { hub.publish(event(UInt64(seq))) }
        #expect(subscription.ending == .overflow(limit: 3))
        #expect(overflowed.value == .overflow(limit: 3))
        #expect(hub.subscriberCount == 0)
        #expect(await subscription.next() == nil, "nothing more is delivered")
        #expect(subscription.ending?.disconnect?.reason == "slow_subscriber")
    }

    @Test func closingTheHubEndsSubscriptionsAndRefusesNewOnes() async {
        let hub = EventHub()
        let subscription = Subscription(id: 1, limit: nil, startSeq: 0, replay: [], filter: { _ in true })
        hub.add(subscription)
        hub.closeAll(.shuttingDown)
        #expect(await subscription.next() == nil)
        let late = Subscription(id: 2, limit: nil, startSeq: 0, replay: [], filter: { _ in true })
        hub.add(late)
        #expect(late.ending == .shuttingDown)
    }

    @Test func aWaitingReaderIsWokenByALiveEvent() async {
        let hub = EventHub()
        let subscription = Subscription(id: 1, limit: 5, startSeq: 0, replay: [], filter: { _ in true })
        hub.add(subscription)
        _ = await subscription.next()  // caughtUp
        async let next = subscription.next()
        hub.publish(event(1, .started))
        guard case .event(let received) = await next else {
            Issue.record("no event")
            return
        }
        #expect(received.type == .started)
    }
}

/// Records what an overflow handler was given.
private final class OverflowFlag: Sendable {
    private let stored = Mutex<SubscriptionEnd?>(nil)
    func set(_ end: SubscriptionEnd) { stored.withLock { $0 = end } }
    var value: SubscriptionEnd? { stored.withLock { $0 } }
}
