import Foundation
import Logging
import Synchronization
import Testing
import TransferProtocol
@testable import TransferCore

/// The limits an upload is held to while it runs, decided from its context and the clocks:
/// the deadline (final) and the low-speed limit over its window (retried).
@Suite("Upload limits: decisions")
struct UploadLimitDecisionTests {
    static func context(deadline: Date? = nil, lowSpeed: Int64 = 0, lowSpeedTime: Double = 10) -> UploadContext {
        var limits = RetryPolicy().limits(for: nil)
        limits.lowSpeedBytesPerSecond = lowSpeed
        limits.lowSpeedTime = lowSpeedTime
        let request = TransferRequest(
            jobID: "u", url: URL(string: "http://example.test/up")!, headers: [:], destination: "", partialPath: "",
            overwrite: false, limits: limits, deadline: deadline, allowedRoots: AllowedRoots([]),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        let plan = UploadPlan(spoolPath: "/nonexistent", method: "PUT", contentType: nil, size: 1 << 20, sha256: Data())
        let attempt = UploadAttempt(settings: UploadAttempt.Settings(url: request.url, size: plan.size, bodyLimit: 0))
        return UploadContext(request: request, plan: plan, attempt: attempt, queues: EngineQueues())
    }

    @Test func aPassedDeadlineEndsTheUploadForGood() throws {
        let now = Date()
        let context = Self.context(deadline: now.addingTimeInterval(5))
        #expect(LimitsMonitor.exceeded(context, now: 1_000, wallClock: now) == nil)
        let failure = try #require(LimitsMonitor.exceeded(context, now: 2_000, wallClock: now.addingTimeInterval(5)))
        #expect(!failure.retryable && failure.error.code == .timeLimit, "\(failure)")
        #expect(failure.error.message.contains("max_time_seconds"))
    }

    @Test func anUploadBelowTheLowSpeedLimitOverItsWindowIsRetried() throws {
        let context = Self.context(lowSpeed: 1000, lowSpeedTime: 10)
        let second: UInt64 = 1_000_000_000
        // The first look opens the window.
        #expect(LimitsMonitor.exceeded(context, now: 100 * second, wallClock: Date()) == nil)
        context.sent.store(20_000, ordering: .relaxed)
        // 20,000 bytes in 10 s: fast enough; the window starts again.
        #expect(LimitsMonitor.exceeded(context, now: 110 * second, wallClock: Date()) == nil)
        context.sent.store(25_000, ordering: .relaxed)
        #expect(LimitsMonitor.exceeded(context, now: 115 * second, wallClock: Date()) == nil, "the window is not over yet")
        let failure = try #require(LimitsMonitor.exceeded(context, now: 120 * second, wallClock: Date()))
        #expect(failure.retryable && failure.error.code == .tooSlow, "\(failure)")
        #expect(failure.error.message.contains("500 bytes/s") && failure.error.message.contains("low_speed_bytes_per_second"), "\(failure.error.message)")
    }
}
