import Testing
@testable import TransferCore
import TransferTestSupport

@Suite("Dense table by job id")
struct DenseTableTests {
    /// Random inserts, updates and removals leave the table holding what a dictionary holds.
    @Test func holdsWhatADictionaryHolds() {
        var random = SplitMix64(seed: 0xD15E)
        var table = DenseTable<Int>()
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
}
