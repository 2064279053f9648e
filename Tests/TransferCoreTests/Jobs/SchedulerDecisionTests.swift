import Testing
import TransferProtocol
@testable import TransferCore

/// The scheduler's decisions as pure functions of a queue and the running transfers: which job
/// starts next and which background transfers yield.
@Suite struct SchedulerDecisionTests {
    let scheduler = Scheduler(maxConcurrent: 2, maxPerHost: 1)

    static func key(_ priority: JobPriority, _ order: UInt64, lane: Int = 1) -> QueueKey {
        QueueKey(rank: priority.rank, lane: lane, position: Int64(order), order: order)
    }

    static func queue(_ entries: [(String, String, JobPriority)]) -> JobQueue {
        var queue = JobQueue()
        for (order, (id, host, priority)) in entries.enumerated() {
            queue.insert(id, key: key(priority, UInt64(order + 1)), host: host)
        }
        return queue
    }

    static func slot(_ id: String, _ host: String, background: Bool = true, order: UInt64 = 100, stopping: StopReason? = nil) -> Scheduler.Slot {
        Scheduler.Slot(
            id: id, host: host, key: key(background ? .background : .normal, order), isBackground: background, stopping: stopping)
    }

    @Test func theFirstJobWhoseHostHasRoomStartsAndTheOthersKeepTheirPlace() {
        var queue = Self.queue([("a", "busy", .normal), ("b", "free", .normal), ("c", "free", .normal)])
        let next = scheduler.next(from: &queue, perHost: ["busy": 1], isStartable: { _ in true })
        #expect(next == "b")
        #expect(queue.entries.map(\.id) == ["a", "c"])
    }

    @Test func entriesOfJobsNoLongerQueuedAreDroppedOnTheWay() {
        var queue = Self.queue([("gone", "h", .normal), ("paused", "h", .normal), ("c", "h", .normal)])
        let next = scheduler.next(from: &queue, perHost: [:], isStartable: { $0 == "c" })
        #expect(next == "c")
        #expect(queue.isEmpty)
    }

    @Test func nothingStartsWhenEveryQueuedHostIsFull() {
        var queue = Self.queue([("a", "h", .normal), ("b", "h", .foreground)])
        #expect(scheduler.next(from: &queue, perHost: ["h": 1], isStartable: { _ in true }) == nil)
        #expect(queue.count == 2)
    }

    @Test func aWaitingNormalJobTakesTheSlotOfTheLastBackgroundTransfer() {
        let queue = Self.queue([("n", "x", .normal)])
        let running = [Self.slot("bg1", "p", order: 1), Self.slot("bg2", "q", order: 2)]
        let yields = scheduler.yields(queue: queue, running: running, isStartable: { _ in true })
        #expect(yields == [Scheduler.Yield(victim: "bg2", forJob: "n")])
    }

    @Test func aJobWaitingForItsHostTakesTheSlotOfATransferToThatHost() {
        let scheduler = Scheduler(maxConcurrent: 4, maxPerHost: 1)
        let queue = Self.queue([("n", "p", .foreground)])
        let running = [Self.slot("bg1", "p", order: 1), Self.slot("bg2", "q", order: 2)]
        #expect(scheduler.yields(queue: queue, running: running, isStartable: { _ in true }) == [.init(victim: "bg1", forJob: "n")])
    }

    @Test func aFreeSlotOrOneAlreadyYieldingMeansNoOtherTransferStops() {
        let queue = Self.queue([("n", "x", .normal)])
        let free = [Self.slot("bg1", "p")]
        #expect(scheduler.yields(queue: queue, running: free, isStartable: { _ in true }).isEmpty)
        let yielding = [Self.slot("bg1", "p", stopping: .yield), Self.slot("bg2", "q")]
        #expect(scheduler.yields(queue: queue, running: yielding, isStartable: { _ in true }).isEmpty)
    }

    @Test func backgroundJobsWaitingNeverStopOthersAndNormalTransfersNeverYield() {
        let background = Self.queue([("b", "x", .background)])
        let running = [Self.slot("bg1", "p"), Self.slot("bg2", "q")]
        #expect(scheduler.yields(queue: background, running: running, isStartable: { _ in true }).isEmpty)
        let normal = Self.queue([("n", "x", .normal)])
        let normals = [Self.slot("a", "p", background: false), Self.slot("b", "q", background: false)]
        #expect(scheduler.yields(queue: normal, running: normals, isStartable: { _ in true }).isEmpty)
    }

    @Test func oneTransferYieldsPerWaitingJobAndPausedOnesAreNotCounted() {
        let queue = Self.queue([("n1", "x", .normal), ("paused", "y", .normal), ("n2", "z", .foreground)])
        let running = [Self.slot("bg1", "p", order: 1), Self.slot("bg2", "q", order: 2), Self.slot("bg3", "r", order: 3, stopping: .pause)]
        let yields = scheduler.yields(queue: queue, running: running, isStartable: { $0 != "paused" })
        // n2 (foreground) stands first in the queue and takes the last background transfer's slot.
        #expect(yields == [.init(victim: "bg2", forJob: "n2"), .init(victim: "bg1", forJob: "n1")])
    }
}
