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

    public init(_ policy: RatePolicy = RatePolicy()) {
        state = Mutex(State(policy: policy))
    }

    public var policy: RatePolicy { state.withLock { $0.policy } }

    /// Puts `policy` in force; running transfers follow it from their next segment.
    public func replace(with policy: RatePolicy) {
        state.withLock { state in
            state.policy = policy
            state.generation &+= 1
        }
    }

    /// The global limit in force at `date` (nil: none).
    public func activeGlobalLimit(at date: Date = Date()) -> Int64? {
        policy.limits(at: date).global
    }

    /// A transfer starts sharing the limits, with its own `limit` (nil: none).
    func join(_ jobID: String, limit: Int64?, bandwidthClass: BandwidthClass) {
        state.withLock { state in
            state.members[jobID] = Member(limit: limit, bandwidthClass: bandwidthClass)
            state.generation &+= 1
        }
    }

    /// A transfer ended: its share goes to the others.
    func leave(_ jobID: String) {
        state.withLock { state in
            guard state.members.removeValue(forKey: jobID) != nil else { return }
            state.generation &+= 1
        }
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
