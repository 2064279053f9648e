import Testing
@testable import TransferCore
import TransferTestSupport

@Suite("The queue's order under inserts and removals")
struct JobQueueTests {
    /// The queue against a plain sorted array, through random inserts, moves, removals by id and
    /// takes at any index (mostly near the front, as the scheduler takes), across compactions.
    @Test func keepsTheOrderOfASortedArray() {
        var random = SplitMix64(seed: 0x51DE)
        func next(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
        var queue = JobQueue()
        var model: [JobQueue.Entry] = []
        var order: UInt64 = 0
        func check() {
            #expect(queue.count == model.count)
            #expect(queue.entries.map(\.id) == model.map(\.id))
            var perHost: [String: Int] = [:]
            for entry in model { perHost[entry.host, default: 0] += 1 }
            #expect(queue.queuedPerHost == perHost)
        }
        for step in 0..<20_000 {
            switch next(10) {
            case 0...4:
                order += 1
                let key = QueueKey(rank: next(3), lane: next(2), position: Int64(next(4) == 0 ? next(100) : Int(order)), order: order)
                let id = "j\(next(3000))"
                let host = "h\(next(4))"
                model.removeAll { $0.id == id }
                let index = model.firstIndex { key < $0.key } ?? model.count
                model.insert(JobQueue.Entry(key: key, id: id, host: host), at: index)
                queue.insert(id, key: key, host: host)
            case 5...7 where !model.isEmpty:
                let index = next(4) == 0 ? next(model.count) : min(next(3), model.count - 1)
                #expect(queue.remove(at: index).id == model.remove(at: index).id)
            case 8 where !model.isEmpty:
                let id = model[next(model.count)].id
                model.removeAll { $0.id == id }
                #expect(queue.remove(id)?.id == id)
            default:
                #expect(queue.remove("absent") == nil)
            }
            if step % 97 == 0 { check() }
        }
        check()
        while !model.isEmpty {
            #expect(queue.remove(at: 0).id == model.removeFirst().id)
        }
        check()
        #expect(queue.isEmpty)
    }
}
