import Testing
@testable import TransferCore
import TransferTestSupport

@Suite("Dense table")
struct DenseTableTests {
    /// Random inserts, updates and removals leave the table holding what a dictionary holds.
    @Test func holdsWhatADictionaryHolds() {
        var random = SplitMix64(seed: 0xD15E)
        var table = DenseTable<String, Int>()
        var reference: [String: Int] = [:]
        for step in 0..<20_000 {
            let id = "job-\(random.next() % 500)"
            switch random.next() % 4 {
            case 0:
                #expect(table.removeValue(forKey: id) == reference.removeValue(forKey: id))
            case 1:
                table[id] = nil
                reference[id] = nil
            default:
                table[id] = step
                reference[id] = step
            }
            #expect(table[id] == reference[id])
            #expect(table.count == reference.count)
        }
        #expect(Dictionary(uniqueKeysWithValues: table.map { ($0.key, $0.value) }) == reference)
        for (id, value) in reference { #expect(table[id] == value) }
        #expect(table["never"] == nil)
    }

    /// Keys that share a few home buckets make long runs that wrap around the table's end: a
    /// removal in a run moves the keys after it back, and every key stays found.
    @Test func keysThatCollideStayFoundThroughRemovals() {
        struct Colliding: Hashable {
            let number: Int
            func hash(into hasher: inout Hasher) { hasher.combine(number % 3) }
        }
        var random = SplitMix64(seed: 0xC011)
        var table = DenseTable<Colliding, Int>()
        var reference: [Colliding: Int] = [:]
        for step in 0..<20_000 {
            let key = Colliding(number: Int(random.next() % 40))
            if random.next() % 3 == 0 {
                #expect(table.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else {
                #expect(table.updateValue(step, forKey: key) == reference.updateValue(step, forKey: key))
            }
            #expect(table.count == reference.count)
        }
        for number in 0..<40 { #expect(table[Colliding(number: number)] == reference[Colliding(number: number)]) }
    }

    /// Reserving room and then filling past it keeps every entry.
    @Test func growsPastWhatWasReserved() {
        var table = DenseTable<String, Int>()
        table.reserveCapacity(100)
        for number in 0..<10_000 { table["\(number)"] = number }
        #expect(table.count == 10_000)
        var missing = 0
        for number in 0..<10_000 where table["\(number)"] != number { missing += 1 }
        #expect(missing == 0)
    }
}
