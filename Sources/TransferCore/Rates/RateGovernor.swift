public import Foundation
import Synchronization

/// Which shared limit a transfer falls under besides the global one.
public enum BandwidthClass: Sendable, Equatable {
    case normal
    /// Shares `background_max_rate` with the other background transfers.
    case background
}

/// The bandwidth limits in force and the transfers they are shared among. The engine asks it for
/// a transfer's rate after each segment; the daemon replaces the policy on reload, and the next
/// segment of every running transfer follows the new one.
public final class RateGovernor: Sendable {
    private struct Member {
        var limit: Int64?
        var bandwidthClass: BandwidthClass
    }

    private struct State {
        var policy: RatePolicy
        var members: [String: Member] = [:]
        /// Bumped whenever the members or the policy change.
        var generation: UInt64 = 0
        /// The shares computed for a generation and a window.
        var shares: [String: Int64] = [:]
        var sharesKey: (generation: UInt64, window: Int?)?
    }

    private let state: Mutex<State>
    /// Told when a transfer's rate may have changed (the engine wakes the transfers waiting for
    /// their pace, so that a lifted or raised limit holds at once).
    private let observers = Mutex<[@Sendable () -> Void]>([])

    public init(_ policy: RatePolicy = RatePolicy()) {
        state = Mutex(State(policy: policy))
    }

    public var policy: RatePolicy { state.withLock { $0.policy } }

    /// Puts `policy` in force; running transfers follow it from their next segment, and those
    /// waiting for their pace look at it again at once.
    public func replace(with policy: RatePolicy) {
        state.withLock { state in
            state.policy = policy
            state.generation &+= 1
        }
        ratesChanged()
    }

    /// Calls `observer` whenever the rate of a running transfer may have changed: the policy was
    /// replaced, or a transfer joined or left the shared limits. It must not block.
    func observe(_ observer: @escaping @Sendable () -> Void) {
        observers.withLock { $0.append(observer) }
    }

    private func ratesChanged() {
        for observer in observers.withLock({ $0 }) { observer() }
    }

    /// When a transfer that waits until `due` (the monotonic clock's nanoseconds, read as `now`)
    /// looks at its rate again: at `due`, or sooner when the time windows may change the limits first.
    func recheckTime(due: UInt64, now: UInt64, date: Date = Date()) -> UInt64 {
        guard let change = nextScheduledChange(after: date) else { return due }
        let until = UInt64(max(change.timeIntervalSince(date), 0) * 1e9)
        return min(due, now &+ until)
    }

    /// When the limits may next change by themselves: the next minute, while the policy has time
    /// windows (they begin and end on minutes); nil without windows.
    func nextScheduledChange(after date: Date) -> Date? {
        guard !policy.windows.isEmpty else { return nil }
        let minute = (date.timeIntervalSinceReferenceDate / 60).rounded(.down) + 1
        return Date(timeIntervalSinceReferenceDate: minute * 60)
    }

    /// The global limit in force at `date` (nil: none).
    public func activeGlobalLimit(at date: Date = Date()) -> Int64? {
        policy.limits(at: date).global
    }

    /// A transfer starts sharing the limits, with its own `limit` (nil: none).
    func join(_ jobID: String, limit: Int64?, bandwidthClass: BandwidthClass) {
        let shared: Bool = state.withLock { state in
            state.members[jobID] = Member(limit: limit, bandwidthClass: bandwidthClass)
            state.generation &+= 1
            return state.policy.sharesLimits
        }
        // Only a shared limit changes the others' rates.
        if shared { ratesChanged() }
    }

    /// A transfer ended: its share goes to the others.
    func leave(_ jobID: String) {
        let shared: Bool = state.withLock { state in
            guard state.members.removeValue(forKey: jobID) != nil else { return false }
            state.generation &+= 1
            return state.policy.sharesLimits
        }
        if shared { ratesChanged() }
    }

    /// The rate `jobID` may run at now, in bytes per second; nil: no limit.
    func rate(for jobID: String, at date: Date = Date()) -> Int64? {
        let policy = self.policy
        let limits = policy.limits(at: date)
        return state.withLock { state in
            guard let member = state.members[jobID] else { return nil }
            if limits.global == nil, limits.background == nil { return member.limit }
            let key = (generation: state.generation, window: limits.window)
            if state.sharesKey?.generation != key.generation || state.sharesKey?.window != key.window {
                state.shares = Self.shares(state.members, limits)
                state.sharesKey = key
            }
            return state.shares[jobID] ?? member.limit
        }
    }

    /// Every member's rate under `limits`: the background class splits its limit first, then all
    /// split the global one, each never above its own limit.
    private static func shares(_ members: [String: Member], _ limits: ActiveRateLimits) -> [String: Int64] {
        let ids = members.keys.sorted()
        var caps = ids.map { members[$0]?.limit }
        let background = ids.indices.filter { members[ids[$0]]?.bandwidthClass == .background }
        if limits.background != nil, !background.isEmpty {
            let filled = RateShares.fill(limits.background, caps: background.map { caps[$0] })
            for (slot, index) in background.enumerated() { caps[index] = filled[slot] }
        }
        let rates = RateShares.fill(limits.global, caps: caps)
        var result: [String: Int64] = [:]
        for (index, id) in ids.enumerated() { if let rate = rates[index] { result[id] = rate } }
        return result
    }
}

extension RatePolicy {
    /// Whether transfers share a limit (global, background or in a window), so that one joining
    /// or leaving changes the others' rates.
    var sharesLimits: Bool { maxRate != nil || backgroundMaxRate != nil || !windows.isEmpty }
}
