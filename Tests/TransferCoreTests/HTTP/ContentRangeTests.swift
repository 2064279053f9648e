import Testing
@testable import TransferCore

@Suite("Content-Range parsing")
struct ContentRangeTests {
    @Test func parsesOrdinaryRanges() {
        let range = ContentRange("bytes 0-99/100")
        #expect(range?.start == 0 && range?.end == 99 && range?.total == 100)
        #expect(ContentRange("bytes 5-9/*")?.total == nil)
        #expect(UnsatisfiedRange("bytes */0")?.total == 0)
    }

    @Test(arguments: [
        "bytes 0-9223372036854775807/*", "bytes 0-9/-5", "bytes -1-9/10", "bytes 0-9/+10", "bytes 0-10/10",
        "bytes 9-0/10", "bytes 0-99999999999999999999/*", "bytes 0-9/ 10x", "items 0-9/10", "bytes 0-9", "",
    ])
    func refusesHostileOrMalformedRanges(header: String) {
        #expect(ContentRange(header) == nil)
    }

    @Test func refusesHostileUnsatisfiedRanges() {
        #expect(UnsatisfiedRange("bytes */-1") == nil)
        #expect(UnsatisfiedRange("bytes */99999999999999999999") == nil)
    }
}
