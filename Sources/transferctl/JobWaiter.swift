import TransferProtocol

/// Polls a job about every half second until it is completed, failed or cancelled,
/// reporting its progress on stderr.
struct JobWaiter {
    let client: ControlClient
    var interval: Duration = .milliseconds(200)
    /// Whether to draw progress in place; by default when stderr is a terminal.
    var interactive = Terminal.isTerminal(2)

    /// Returns the job's final snapshot.
    func wait(for submitted: Job) async throws -> Job {
        var reporter = ProgressReporter(interactive: interactive)
        let notice = InterruptNotice(jobID: TerminalText.printable(submitted.id), clearLine: interactive)
        defer { notice.cancel() }
        var job = submitted
        do {
            reporter.update(job)
            while !job.state.isTerminal {
                try await Task.sleep(for: interval)
                job = try fetch(job.id)
                reporter.update(job)
            }
        } catch {
            reporter.abandon()
            throw error
        }
        reporter.finish(job)
        return job
    }

    private func fetch(_ id: String) throws -> Job {
        let jobs = try client.call(TransferProtocol.Status.self, .init(id: id)).jobs
        guard let job = jobs.first(where: { $0.id == id }) else {
            throw TransferCtlError.connectionBroken("transferd's status answer does not contain job \(id)")
        }
        return job
    }
}
