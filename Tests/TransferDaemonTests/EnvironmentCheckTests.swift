import Testing
import TransferDaemon

/// A misspelt `TRANSFERD_*` variable is reported, not ignored.
@Suite("Environment check")
struct EnvironmentCheckTests {
    @Test func anUnknownTransferdVariableIsRefusedWithTheClosestKnownOne() throws {
        #expect(throws: Never.self) { try EnvironmentCheck.check(["TRANSFERD_MAX_CONCURRENT_TRANSFERS": "2", "TRANSFERD_SOCKET": "/x", "HOME": "/"]) }
        do {
            try EnvironmentCheck.check(["TRANSFERD_MAX_CONCURENT_TRANSFERS": "2"])
            Issue.record("a misspelt variable was accepted")
        } catch {
            #expect(error.description.contains("unknown environment variable TRANSFERD_MAX_CONCURENT_TRANSFERS: did you mean TRANSFERD_MAX_CONCURRENT_TRANSFERS?"), "\(error)")
            #expect(error.description.contains("TRANSFERD_STATE_DIR"), "the known ones are listed: \(error)")
        }
        do {
            try EnvironmentCheck.check(["TRANSFERD_FROBNICATE": "1"])
            Issue.record("an unknown variable was accepted")
        } catch {
            #expect(!error.description.contains("did you mean"), "nothing is close: \(error)")
        }
        #expect(!EnvironmentCheck.knownVariables.contains("TRANSFERD_HOOKS"), "hooks come from the file only")
    }
}
