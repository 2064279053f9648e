import Testing
import TransferProtocol

/// Rates as curl's --limit-rate spells them.
@Suite("Byte rate")
struct ByteRateTests {
    @Test func suffixesArePowersOf1024() {
        #expect(ByteRate.parse("2M") == 2 << 20)
        #expect(ByteRate.parse("500k") == 500 << 10)
        #expect(ByteRate.parse("1G") == 1 << 30)
        #expect(ByteRate.parse("1.5M") == 3 << 19)
        #expect(ByteRate.parse("1048576") == 1 << 20)
        #expect(ByteRate.parse("0") == 0)
    }

    @Test func otherTextIsRefusedWithTheFix() {
        for text in ["2X", "", "M", "-1M", ".5M", "2 M", "1e3", "9999999T"] { #expect(ByteRate.parse(text) == nil) }
        #expect(
            ByteRate.problem("limit_rate", "2X")
                == "limit_rate '2X' is not a rate: give bytes per second with an optional K, M or G suffix, e.g. 2M")
        #expect(ByteRate.problem("limit_rate", "10")?.contains("at least 1K") == true)
        #expect(ByteRate.problem("limit_rate", "0") == nil)
        #expect(ByteRate.limit("0") == nil)
    }
}
