/// How long and how often a client tries to reach a daemon that went away: transferctl's
/// subscriptions (`watch`, `wait`, `events`) and TransferKit's listener follow the same steps.
public struct ReconnectPolicy: Sendable {
    /// After this long without a daemon, give up: a daemon that was stopped for good
    /// (transferctl exits 3; TransferKit's listener never gives up while its session is valid).
    public var giveUpAfter: Duration = .seconds(600)
    /// How often to say that it is still waiting.
    public var reminderInterval: Duration = .seconds(60)

    public init() {}

    /// Seconds before attempt `attempt` (from 0): quick at first, as systemd restarts a daemon in
    /// about a second, then every two seconds.
    public func delay(attempt: Int) -> Double {
        min(2.0, 0.05 * Double(1 << min(attempt, 6)))
    }
}
