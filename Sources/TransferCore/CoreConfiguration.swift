/// What the core's scheduling and retention follow; the daemon may change it while running.
public struct CoreConfiguration: Sendable, Equatable {
    /// Transfers that run at once; the rest wait in submission order.
    public var maxConcurrentTransfers = 4
    /// How long finished (completed, failed, cancelled) jobs stay visible before they are dropped.
    public var finishedJobRetention: Duration = .seconds(7 * 24 * 3600)

    public init(maxConcurrentTransfers: Int = 4, finishedJobRetention: Duration = .seconds(7 * 24 * 3600)) {
        self.maxConcurrentTransfers = maxConcurrentTransfers
        self.finishedJobRetention = finishedJobRetention
    }
}
