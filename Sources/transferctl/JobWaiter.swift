import TransferProtocol

/// Follows jobs through a subscription until each is completed, failed or cancelled, reporting
/// their progress on stderr. The subscription first replays each job's latest event, so a job
/// that ended before the wait began is reported at once.
struct JobWaiter {
    /// A connection without a read timeout: a job may stay queued for hours.
    let client: ControlClient
    /// Whether to draw progress in place; by default when stderr is a terminal.
    var interactive = Terminal.isTerminal(2)

    /// Returns the final snapshot of each job, in the order of `ids`.
    func wait(for ids: [String]) throws -> [Job] {
        var reporter = ProgressReporter(interactive: interactive)
        let notice = InterruptNotice(jobIDs: ids.map(TerminalText.printable), clearLines: interactive)
        defer { notice.cancel() }
        var finished: [String: Job] = [:]
        do {
            let wanted = Set(ids)
            _ = try client.call(Subscribe.self, .init(ids: Array(wanted)))
            while finished.count < wanted.count {
                // Root may name another user's job as UID:ID; events show its id alone.
                guard case .event(let event) = try client.nextStreamItem(),
                    let name = wanted.first(where: event.job.isNamed), finished[name] == nil
                else { continue }
                if event.type.isTerminal { finished[name] = event.job }
                reporter.report(event)
            }
        } catch {
            reporter.abandon()
            throw error
        }
        return ids.compactMap { finished[$0] }
    }
}
