import Foundation
import Testing
@testable import TransferCore

/// Shared limits: equal shares, what a job held lower by its own limit leaves goes to the others,
/// the background class splits its own limit first, and windows replace the limits by time.
@Suite("Rate shares and policy")
struct RateSharesTests {
    @Test func sharesAreEqualWithoutCaps() {
        #expect(RateShares.fill(3000, caps: [nil, nil, nil]) == [1000, 1000, 1000])
        #expect(RateShares.fill(nil, caps: [nil, 500]) == [nil, 500])
    }

    @Test func aCappedJobLeavesItsRestToTheOthers() {
        #expect(RateShares.fill(4000, caps: [500, nil, nil]) == [500, 1750, 1750])
        #expect(RateShares.fill(4000, caps: [5000, nil]) == [2000, 2000])
    }

    @Test func governorSplitsTheGlobalLimitAmongRunningJobs() {
        let governor = RateGovernor(RatePolicy(maxRate: 4 << 20))
        governor.join("a", limit: nil, bandwidthClass: .normal)
        #expect(governor.rate(for: "a") == 4 << 20)
        governor.join("b", limit: nil, bandwidthClass: .normal)
        governor.join("c", limit: 1 << 20, bandwidthClass: .normal)
        #expect(governor.rate(for: "a") == 3 << 19)
        #expect(governor.rate(for: "c") == 1 << 20)
        governor.leave("b")
        #expect(governor.rate(for: "a") == 3 << 20)
        governor.replace(with: RatePolicy())
        #expect(governor.rate(for: "a") == nil)
        #expect(governor.rate(for: "c") == 1 << 20)
    }

    @Test func backgroundJobsShareTheirClassLimit() {
        let governor = RateGovernor(RatePolicy(maxRate: 10_000, backgroundMaxRate: 2000))
        governor.join("n", limit: nil, bandwidthClass: .normal)
        governor.join("b1", limit: nil, bandwidthClass: .background)
        governor.join("b2", limit: nil, bandwidthClass: .background)
        #expect(governor.rate(for: "b1") == 1000)
        #expect(governor.rate(for: "b2") == 1000)
        #expect(governor.rate(for: "n") == 8000)
    }

    @Test func windowsReplaceTheLimitsWhileTheyHold() {
        // Monday to Friday, 08:00 to 18:00; and a night window from 22:00 on Saturday into Sunday.
        let policy = RatePolicy(
            maxRate: 1000, backgroundMaxRate: 100,
            windows: [
                RateWindow(days: Set(2...6), from: 8 * 60, to: 18 * 60, maxRate: 500),
                RateWindow(days: [7], from: 22 * 60, to: 6 * 60, maxRate: nil, backgroundMaxRate: 50),
            ])
        #expect(policy.limits(weekday: 2, minute: 9 * 60) == ActiveRateLimits(global: 500, background: 100, window: 0))
        #expect(policy.limits(weekday: 2, minute: 18 * 60) == ActiveRateLimits(global: 1000, background: 100, window: nil))
        #expect(policy.limits(weekday: 1, minute: 9 * 60) == ActiveRateLimits(global: 1000, background: 100, window: nil))
        #expect(policy.limits(weekday: 7, minute: 23 * 60) == ActiveRateLimits(global: nil, background: 50, window: 1))
        #expect(policy.limits(weekday: 1, minute: 5 * 60) == ActiveRateLimits(global: nil, background: 50, window: 1))
        #expect(policy.limits(weekday: 1, minute: 23 * 60).window == nil)
        // Where windows overlap, the lowest limit holds.
        var overlapping = policy
        overlapping.windows.append(RateWindow(days: [2], from: 12 * 60, to: 13 * 60, maxRate: 200))
        #expect(overlapping.limits(weekday: 2, minute: 12 * 60 + 30).global == 200)
        #expect(overlapping.limits(weekday: 2, minute: 11 * 60).global == 500)
    }
}
