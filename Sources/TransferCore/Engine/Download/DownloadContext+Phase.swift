extension DownloadContext.Phase {
    /// A cancel from the core, in this phase: its outcome, and the phase the transfer moves to
    /// (nil: it stays; a transfer landing completes, one already ending ends as it was).
    func cancelled() -> (outcome: CancelOutcome, next: Self?) {
        switch self {
        case .landing: (.landing, nil)
        case .cancelling: (.cancelled, nil)
        case .stopping: (.notRunning, nil)
        case .active, .backedUp: (.cancelled, .cancelling)
        }
    }

    /// A stop from the core (a pause, a yield, shutdown), in this phase: its outcome, and the phase
    /// the transfer moves to (nil: it stays).
    func stopped(_ reason: StopReason) -> (outcome: StopOutcome, next: Self?) {
        switch self {
        case .landing: (.landing, nil)
        case .cancelling, .stopping: (.notRunning, nil)
        case .active, .backedUp: (.stopping, .stopping(reason))
        }
    }
}

extension DownloadContext.Control {
    /// Moves to `next`, when a cancel or a stop decided one, and cancels every request. Returns
    /// whether it moved: then the transfer's wait, if it waits, is to be ended as well.
    mutating func end(in next: DownloadContext.Phase?) -> Bool {
        guard let next else { return false }
        phase = next
        cancelTasks()
        return true
    }
}
