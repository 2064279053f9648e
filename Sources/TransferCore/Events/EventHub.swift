public import TransferProtocol
import Synchronization

/// Fans job events out to subscribers. The core publishes in sequence order; each subscription
/// keeps its own bounded queue, so a subscriber that stops reading never blocks the core or grows
/// the daemon's memory: once its queue is full it is dropped, and told why.
public final class EventHub: Sendable {
    private struct State {
        var subscriptions: [ObjectIdentifier: Subscription] = [:]
        var closed: SubscriptionEnd?
    }

    private let state = Mutex(State())
    /// The bytes subscriber queues may hold, per user and in all; the daemon sets its limits.
    public let budget = SubscriberBudget(perUser: 16 << 20, total: 64 << 20)

    public init() {}

    /// Whether anyone listens; progress events are not even made otherwise.
    public var hasSubscribers: Bool { state.withLock { !$0.subscriptions.isEmpty } }

    /// How many subscriptions are open.
    public var subscriberCount: Int { state.withLock { $0.subscriptions.count } }

    /// Adds a subscription. Call from the core, in the same turn as the snapshot its replay comes
    /// from, so that no event falls between the replay and the live stream.
    func add(_ subscription: Subscription) {
        let closed: SubscriptionEnd? = state.withLock { state in
            if let closed = state.closed { return closed }
            state.subscriptions[ObjectIdentifier(subscription)] = subscription
            return nil
        }
        if let closed { subscription.end(closed) }
        subscription.onEnd = { [weak self] in self?.remove($0) }
    }

    private func remove(_ subscription: Subscription) {
        _ = state.withLock { $0.subscriptions.removeValue(forKey: ObjectIdentifier(subscription)) }
    }

    /// Delivers `event` to every subscription whose filter takes it.
    func publish(_ event: JobEvent) {
        let targets = state.withLock { Array($0.subscriptions.values) }
        for subscription in targets where subscription.filter(event) {
            subscription.deliver(event)
        }
    }

    /// Ends every subscription (the daemon is stopping) and refuses new ones.
    public func closeAll(_ end: SubscriptionEnd) {
        let targets = state.withLock { state in
            state.closed = end
            return Array(state.subscriptions.values)
        }
        targets.forEach { $0.end(end) }
    }
}

/// Why a subscription ended.
public enum SubscriptionEnd: Sendable, Equatable {
    /// Its queue filled because the subscriber did not read: `limit` events were waiting.
    case overflow(limit: Int)
    /// The bytes queued for the user's subscriptions, or for everyone's, reached the limit
    /// `key` configures.
    case overflowBytes(limit: Int, key: String)
    /// The daemon is stopping.
    case shuttingDown
    /// The subscriber asked to stop, or its connection closed.
    case cancelled

    /// What the subscriber is told before its connection closes, when anything.
    public var disconnect: Disconnect? {
        switch self {
        case .overflow(let limit):
            return Disconnect(
                reason: "slow_subscriber",
                message: "more than \(limit) events waited for this connection because it stopped reading them; "
                    + "read events as they arrive, or raise subscriber_queue_events in the configuration, "
                    + "then subscribe again: a session's missed terminal events are replayed")
        case .overflowBytes(let limit, let key):
            let whose = key == "subscriber_queue_bytes_total" ? "all subscribers" : "your connections"
            return Disconnect(
                reason: "slow_subscriber",
                message: "more than \(limit) bytes of events waited for \(whose) because they were not read; "
                    + "read events as they arrive, or raise \(key) in the configuration, then subscribe again: "
                    + "a session's missed terminal events are replayed")
        case .shuttingDown:
            return Disconnect(reason: "shutting_down", message: "transferd is stopping; subscribe again once it has restarted")
        case .cancelled:
            return nil
        }
    }
}

/// What a subscription yields, in order: replayed events, one `caughtUp`, then live events,
/// until it ends.
public enum SubscriptionItem: Sendable, Equatable {
    case event(JobEvent)
    case caughtUp(CaughtUp)
}

/// One subscriber's view of the events: its replay, then live events through a bounded queue.
public final class Subscription: Sendable {
    private struct State {
        var replay: [JobEvent]
        var caughtUpSent = false
        /// Live events waiting, with the bytes each holds of the budget.
        var queue: [(event: JobEvent, bytes: Int)] = []
        var queuedBytes = 0
        var waiter: CheckedContinuation<SubscriptionItem?, Never>?
        var end: SubscriptionEnd?
        var onEnd: (@Sendable (Subscription) -> Void)?
        var onOverflow: (@Sendable (SubscriptionEnd) -> Void)?
    }

    /// The id the subscriber knows it by (unique on its connection).
    public let id: Int
    /// Live events at most waiting; nil: no bound (for the daemon's own subscribers, like hooks).
    public let limit: Int?
    /// The uid whose budget the queue counts against; nil: no byte bound (with `limit` nil).
    public let owner: UInt32?
    private let budget: SubscriberBudget?
    /// The last sequence number assigned when the subscription began.
    public let startSeq: UInt64
    /// How many events the replay holds.
    public let replayCount: Int
    let filter: @Sendable (JobEvent) -> Bool
    /// Replayed sequence numbers: a live copy of one of them (still on its way out of the core) is skipped.
    private let replayed: Set<UInt64>
    private let state: Mutex<State>

    init(
        id: Int, limit: Int?, owner: UInt32? = nil, budget: SubscriberBudget? = nil, startSeq: UInt64, replay: [JobEvent],
        filter: @escaping @Sendable (JobEvent) -> Bool
    ) {
        self.id = id
        self.limit = limit
        self.owner = owner
        self.budget = budget
        self.startSeq = startSeq
        self.filter = filter
        self.replayCount = replay.count
        self.replayed = Set(replay.map(\.seq))
        // Kept newest first, so the oldest is taken from the end.
        state = Mutex(State(replay: replay.sorted { $0.seq > $1.seq }))
    }

    fileprivate var onEnd: (@Sendable (Subscription) -> Void)? {
        get { state.withLock { $0.onEnd } }
        set { state.withLock { $0.onEnd = newValue } }
    }

    /// Called once, from the publishing thread, when the queue overflows: the connection uses it
    /// to send its last notification and close, even while a write to the client is stuck.
    public func onOverflow(_ handler: @escaping @Sendable (SubscriptionEnd) -> Void) {
        state.withLock { $0.onOverflow = handler }
    }

    /// Why the subscription ended, once it has.
    public var ending: SubscriptionEnd? { state.withLock { $0.end } }

    func deliver(_ event: JobEvent) {
        guard !replayed.contains(event.seq) else { return }
        enum Action { case none, resume(CheckedContinuation<SubscriptionItem?, Never>), overflow(SubscriptionEnd) }
        let action: Action = state.withLock { state in
            guard state.end == nil else { return .none }
            if state.replay.isEmpty, state.caughtUpSent, let waiter = state.waiter {
                state.waiter = nil
                return .resume(waiter)
            }
            if let limit, state.queue.count >= limit {
                return .overflow(.overflow(limit: limit))
            }
            var bytes = 0
            if let budget, let owner {
                bytes = event.estimatedBytes
                if let refused = budget.reserve(bytes, for: owner) { return .overflow(refused) }
            }
            state.queue.append((event, bytes))
            state.queuedBytes += bytes
            return .none
        }
        switch action {
        case .none: break
        case .resume(let waiter): waiter.resume(returning: .event(event))
        case .overflow(let reason): end(reason)
        }
    }

    /// Ends the subscription: a waiting reader gets nil, the queue is freed.
    public func end(_ reason: SubscriptionEnd) {
        let (waiter, onEnd, onOverflow): (CheckedContinuation<SubscriptionItem?, Never>?, (@Sendable (Subscription) -> Void)?, (@Sendable (SubscriptionEnd) -> Void)?) =
            state.withLock { state in
                guard state.end == nil else { return (nil, nil, nil) }
                state.end = reason
                if let budget, let owner { budget.release(state.queuedBytes, for: owner) }
                state.queuedBytes = 0
                state.queue = []
                state.replay = []
                let taken = (state.waiter, state.onEnd, state.onOverflow)
                state.waiter = nil
                state.onEnd = nil
                state.onOverflow = nil
                return taken
            }
        onEnd?(self)
        switch reason {
        case .overflow, .overflowBytes:
            onOverflow?(reason)
            HeapTrim.soon()
        case .shuttingDown, .cancelled:
            break
        }
        waiter?.resume(returning: nil)
    }

    /// The next item, waiting for a live event when there is none; nil once the subscription ended.
    public func next() async -> SubscriptionItem? {
        await withTaskCancellationHandler {
            await take()
        } onCancel: {
            end(.cancelled)
        }
    }

    private func take() async -> SubscriptionItem? {
        await withCheckedContinuation { (continuation: CheckedContinuation<SubscriptionItem?, Never>) in
            let item: SubscriptionItem?? = state.withLock { state in
                if state.end != nil { return .some(nil) }
                if let event = state.replay.popLast() { return .some(.event(event)) }
                if !state.caughtUpSent {
                    state.caughtUpSent = true
                    return .some(.caughtUp(CaughtUp(subscription: id, replayed: replayCount, seq: startSeq)))
                }
                if !state.queue.isEmpty {
                    let (event, bytes) = state.queue.removeFirst()
                    state.queuedBytes -= bytes
                    if let budget, let owner { budget.release(bytes, for: owner) }
                    return .some(.event(event))
                }
                state.waiter = continuation
                return .none
            }
            if let item { continuation.resume(returning: item) }
        }
    }
}
