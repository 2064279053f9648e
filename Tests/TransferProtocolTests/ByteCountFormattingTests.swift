import Testing
import TransferProtocol

/// Sizes and rates as transferctl and the daemon's STATUS show them.
@Suite("Byte count formatting")
struct ByteCountFormattingTests {
    @Test(arguments: [
        (0, "0 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (10 << 20, "10.0 MiB"),
        (3 << 30 + 300 << 20, "3.3 GiB"),
        (5 << 40, "5.0 TiB"),
        (2048 << 40, "2048.0 TiB"),
    ] as [(Int64, String)])
    func sizesInTheLargestUnitBelow1024(bytes: Int64, text: String) {
        #expect(ByteCountFormatting.string(bytes) == text)
    }

    /// 1 MiB less one byte is 1023.999 KiB, which rounds to the next unit instead of `1024.0 KiB`.
    @Test func roundingUpMovesToTheNextUnit() {
        #expect(ByteCountFormatting.string((1 << 20) - 1) == "1.0 MiB")
        #expect(ByteCountFormatting.string((1 << 20) - 60) == "1023.9 KiB")
    }

    @Test func ratesArePerSecond() {
        #expect(ByteCountFormatting.rate(0) == "0 B/s")
        #expect(ByteCountFormatting.rate(512) == "512 B/s")
        #expect(ByteCountFormatting.rate(12_900_000) == "12.3 MiB/s")
    }
}
