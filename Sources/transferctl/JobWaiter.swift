import TransferProtocol

/// Follows jobs through a subscription until each is completed, failed or cancelled, reporting
/// their progress on stderr. The subscription first replays each job's latest event, so a job
/// that ended before the wait began is reported at once; when the daemon restarts meanwhile, the
/// subscription is made again and continues where it stopped (`ResumingSubscription`).
struct JobWaiter {
    /// The connection to use first (without a read timeout: a job may stay queued for hours).
    let client: ControlClient
    /// Opens another connection when the first one is lost.
    let reconnect: () throws(TransferCtlError) -> ControlClient
    /// Whether to draw progress in place; by default when stderr is a terminal.
    var interactive = Terminal.isTerminal(2)

    init(client: ControlClient, options: ClientOptions) {
        self.client = client
        reconnect = { () throws(TransferCtlError) -> ControlClient in try options.connect(timeout: nil) }
    }

    /// Returns the final snapshot of each job, in the order of `ids`.
    func wait(for ids: [String]) throws -> [Job] {
        var reporter = ProgressReporter(interactive: interactive)
        let notice = InterruptNotice(jobIDs: ids.map(TerminalText.printable), clearLines: interactive)
        defer { notice.cancel() }
        var finished: [String: Job] = [:]
        do {
            let wanted = Set(ids)
            var first: ControlClient? = client
            let reconnect = self.reconnect
            let subscription = try ResumingSubscription(params: .init(ids: Array(wanted))) { () throws(TransferCtlError) -> ControlClient in
                if let given = first {
                    first = nil
                    return given
                }
                return try reconnect()
            }
            while finished.count < wanted.count {
                switch try subscription.next() {
                case .notice(let line):
                    reporter.notice(line)
                case .event(let event):
                    // Root may name another user's job as UID:ID; events show its id alone. Two
                    // lookups, not a pass over every name: a wait may follow thousands of jobs.
                    guard let name = [event.job.id, event.job.ownedID].first(where: wanted.contains), finished[name] == nil else { continue }
                    if event.type.isTerminal { finished[name] = event.job }
                    reporter.report(event)
                }
            }
        } catch {
            reporter.abandon()
            throw error
        }
        return ids.compactMap { finished[$0] }
    }
}
