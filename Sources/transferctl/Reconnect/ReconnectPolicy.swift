/// How long and how often a `ResumingSubscription` tries to reach a daemon that went away.
struct ReconnectPolicy: Sendable {
    /// After this long without a daemon, give up (exit 3): a daemon that was stopped for good.
    var giveUpAfter: Duration = .seconds(600)
    /// How often to say that it is still waiting.
    var reminderInterval: Duration = .seconds(60)

    /// Seconds before attempt `attempt` (from 0): quick at first, as systemd restarts a daemon in
    /// about a second, then every two seconds.
    func delay(attempt: Int) -> Double {
        min(2.0, 0.05 * Double(1 << min(attempt, 6)))
    }
}
