/// What the core keeps about one running transfer, from `schedule` starting it to
/// `transferEnded`: everything here goes when it ends, in one step.
struct RunningTransfer {
    /// The host it fetches from or sends to (`max_connections_per_host`).
    let host: String
    /// The partial file's generation its last `responded` report described.
    var generation = 0
    /// The offset up to which its received bytes are counted in the metrics; nil for an upload
    /// (bytes it sends are not bytes received).
    var countedBytes: Int64?
    /// The bytes its last progress event showed.
    var progressShown: Int64?
    /// Why it is stopping, once the core asked the engine to stop it.
    var stopping: StopReason?
    /// Requests waiting for it to end (a pause for its stop, a cancel that met its end on the way).
    var endWaiters: [CheckedContinuation<Void, Never>] = []

    init(host: String, countedBytes: Int64?) {
        self.host = host
        self.countedBytes = countedBytes
    }
}
