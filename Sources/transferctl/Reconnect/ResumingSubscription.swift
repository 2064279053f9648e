import Foundation
import TransferProtocol

/// A subscription that outlives its connection. When the daemon goes away (killed, restarted,
/// stopped cleanly, or it dropped a reader that fell behind), it connects again, subscribes with
/// the same filters and `after` set to the last sequence number it delivered, and goes on: the
/// daemon replays each job that changed meanwhile once, so nothing is missed and nothing comes
/// twice (docs/protocol.md, "Reconnecting"). It says so through `.notice` items, for stderr.
///
/// Only the protocol is used: a library or a script can follow the same steps.
final class ResumingSubscription {
    /// What `next()` yields.
    enum Item {
        /// An event to show.
        case event(JobEvent)
        /// A line for the user about the connection (lost, reconnected).
        case notice(String)
    }

    /// Opens a new connection to the daemon (without a read timeout: events may be hours apart).
    private let connect: () throws(TransferCtlError) -> ControlClient
    /// The filters, without `after`.
    private let params: Subscribe.Params
    private let policy: ReconnectPolicy
    private var client: ControlClient
    /// The `after` of the next subscribe: every event up to it has been delivered or was not
    /// wanted. Grows with each delivered event and each `caughtUp`.
    private(set) var resumeAfter: UInt64 = 0
    /// The `after` the current connection's subscribe sent, if any: replayed events at or below
    /// it were delivered before.
    private var sentAfter: UInt64?
    /// Whether the current connection's replay is over.
    private var caughtUp = false
    /// Notices waiting to be yielded, oldest first.
    private var notices: [String] = []

    /// Connects and subscribes; a refusal (an unknown id, say) is thrown as it is.
    init(params: Subscribe.Params, policy: ReconnectPolicy = ReconnectPolicy(), connect: @escaping () throws(TransferCtlError) -> ControlClient) throws {
        self.params = params
        self.policy = policy
        self.connect = connect
        client = try connect()
        try subscribe()
    }

    /// The next event, or a notice about the connection. Throws when the daemon does not come
    /// back within the policy's time, or refuses the subscription.
    func next() throws -> Item {
        while true {
            if !notices.isEmpty { return .notice(notices.removeFirst()) }
            let item: StreamItem
            do {
                item = try client.nextStreamItem()
            } catch {
                guard let reason = Self.lostConnection(error) else { throw error }
                try reconnect(because: reason)
                continue
            }
            switch item {
            case .caughtUp(let marker):
                caughtUp = true
                resumeAfter = max(resumeAfter, marker.seq)
            case .event(let event):
                // Defensive: the daemon replays only what changed after `after`, and live events
                // are numbered above everything before them.
                if caughtUp, event.seq <= resumeAfter { continue }
                if !caughtUp, let sentAfter, event.seq != 0, event.seq <= sentAfter { continue }
                resumeAfter = max(resumeAfter, event.seq)
                return .event(event)
            }
        }
    }

    /// Subscribes on the current connection, with `after` once something was delivered.
    private func subscribe() throws {
        var request = params
        let after: UInt64? = resumeAfter > 0 ? resumeAfter : nil
        request.after = after
        let result = try client.call(Subscribe.self, request)
        sentAfter = after
        caughtUp = false
        // Without a replay, everything up to the subscription's start is behind us already.
        if result.replay == 0 { resumeAfter = max(resumeAfter, result.seq) }
    }

    /// Connects and subscribes again until it works or the policy gives up.
    private func reconnect(because reason: String) throws {
        notices.append("transferctl: lost the connection to transferd (\(reason)); reconnecting…")
        let started = ContinuousClock.now
        var attempt = 0
        var lastProblem = reason
        var nextReminder = policy.reminderInterval
        while true {
            let waited = ContinuousClock.now - started
            if waited >= policy.giveUpAfter {
                throw TransferCtlError.connectionBroken(
                    "transferd did not come back within \(policy.giveUpAfter.components.seconds) s (\(lastProblem)); "
                        + "start it again (systemctl start transferd, or transferd), then run the command again")
            }
            if waited >= nextReminder {
                notices.append("transferctl: still waiting for transferd to come back (\(lastProblem)); Ctrl-C stops waiting")
                nextReminder += policy.reminderInterval
            }
            Thread.sleep(forTimeInterval: policy.delay(attempt: attempt))
            attempt += 1
            do {
                client = try connect()
                try subscribe()
                notices.append(
                    "transferctl: reconnected to transferd at \(TerminalText.printable(client.socketPath)); "
                        + (resumeAfter > 0 ? "continuing after event \(resumeAfter)" : "continuing"))
                return
            } catch {
                if case .rpc(let refusal) = error as? ControlClientError, refusal.code != .shuttingDown {
                    throw TransferCtlError.refused(refusal)
                }
                if case .untrustedSocket = error as? TransferCtlError { throw error }
                if case .refused(let refusal) = error as? TransferCtlError, refusal.code != .shuttingDown { throw error }
                lastProblem = Self.lostConnection(error) ?? "\(error)"
            }
        }
    }

    /// Why the connection is gone, when `error` means it is (rather than a refusal).
    static func lostConnection(_ error: any Error) -> String? {
        switch error {
        case let error as ControlClientError:
            switch error {
            case .protocolViolation(let detail): return detail
            case .cannotConnect(_, let reason): return reason
            case .permissionDenied, .rpc: return nil
            }
        case let error as TransferCtlError:
            switch error {
            case .connectionBroken(let detail): return detail
            case .unreachable(let attempts): return attempts.first?.reason ?? "transferd cannot be reached"
            case .refused(let refusal) where refusal.code == .shuttingDown: return refusal.message
            case .refused, .jobUnsuccessful, .usage, .localFile, .untrustedSocket: return nil
            }
        default:
            return nil
        }
    }
}
