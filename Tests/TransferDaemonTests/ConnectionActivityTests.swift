import Foundation
import Synchronization
import Testing
@testable import TransferDaemon

/// A connection's idle time, read while its requests touch it from another thread.
@Suite("Connection activity")
struct ConnectionActivityTests {
    /// A request touching the connection between the reader's two loads once read as a negative
    /// time wrapped around (centuries idle), and the connection was closed as idle at once.
    @Test func aTouchWhileTheIdleTimeIsReadNeverReadsAsIdle() {
        let activity = ConnectionActivity()
        let stop = Atomic<Bool>(false)
        let toucher = Thread {
            while !stop.load(ordering: .relaxed) { activity.touch() }
        }
        toucher.start()
        defer { stop.store(true, ordering: .relaxed) }
        var longest: UInt64 = 0
        for _ in 0..<200_000 { longest = max(longest, activity.idleNanoseconds()) }
        #expect(longest < 60_000_000_000)
    }
}
