import Testing
@testable import TransferDaemon

/// `waitForResult`: a result that comes within the limit is never reported as a timeout.
@Suite("Bounded wait")
struct BoundedWaitTests {
    @Test func aQuickResultIsNeverTakenForATimeout() async {
        // The timer used to be cancelled before the result was handed over, and its wake-up raced
        // the result: now and then a task that ended at once was reported as timed out.
        for round in 0..<2_000 {
            let task = Task { round }
            let result = await waitForResult(of: task, within: .seconds(30), evenIfCancelled: true)
            #expect(result.map { (try? $0.get()) == round } == true, "round \(round)")
            if result == nil { break }
        }
    }

    @Test func aTaskThatOutlastsTheLimitIsReportedAsTimedOut() async {
        let task = Task { try? await Task.sleep(for: .seconds(30)) }
        defer { task.cancel() }
        #expect(await waitForResult(of: task, within: .milliseconds(50)) == nil)
    }
}
