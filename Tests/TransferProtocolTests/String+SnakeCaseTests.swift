import Testing
import TransferProtocol

/// Swift names as the wire and the configuration file spell them.
@Suite("snake_case names")
struct StringSnakeCaseTests {
    @Test(arguments: [
        ("url", "url"),
        ("maxConcurrentTransfers", "max_concurrent_transfers"),
        ("retryMaxDelaySeconds", "retry_max_delay_seconds"),
        ("sha256", "sha256"),
        ("max_attempts", "max_attempts"),
        ("", ""),
    ])
    func capitalsStartWords(name: String, snakeCased: String) {
        #expect(name.snakeCased == snakeCased)
    }

    /// Acronyms too, letter by letter: the names of the wire and of the file have none.
    @Test func everyCapitalStartsAWord() {
        #expect("expectedSHA".snakeCased == "expected_s_h_a")
        #expect("Limits".snakeCased == "_limits")
    }
}
