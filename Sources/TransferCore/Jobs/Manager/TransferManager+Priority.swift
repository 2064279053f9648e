import Foundation
import Logging
public import TransferProtocol

extension TransferManager {
    /// Changes the class of a job `caller` may see (`priority`); answers once the record is
    /// durable. A queued job takes its place in the new class at once; a running background job
    /// that a job of a higher class waits for yields its slot; a running job made `background`
    /// yields when a foreground or normal job waits.
    public func setPriority(id: String, to text: String, caller: UInt32) async throws(CoreError) -> Job {
        guard let priority = try SubmitValidator.validatePriority(text) else {
            throw CoreError(.invalidParameter("priority"), "give priority: \(JobPriority.choices)")
        }
        var job = try visibleJob(id, caller: caller)
        guard !job.state.isTerminal else {
            let when = job.finishedAt.map { " at \(WireCoding.formatTimestamp($0))" } ?? ""
            throw CoreError(
                .jobFinished,
                "job \(id) already \(job.state.rawValue)\(when); only a queued, waiting or running job's priority can be changed: \(job.runAgainHint(as: id))")
        }
        // From here on, the job's key: the id as the caller wrote it may leave its owner out.
        let id = job.id
        let before = job.priorityClass
        job.priority = priority == .normal ? nil : priority
        let change = try jobs.update(job)
        if let lane = queue.key(of: id)?.lane { queueJob(job, lane: lane) }
        do {
            try await commit([change])
        } catch {
            throw Self.notSaved(error, what: "the new priority")
        }
        if before != priority {
            logger(forJob: id).info("priority changed", metadata: ["from": "\(before.rawValue)", "to": "\(priority.rawValue)"])
            emit(.prioritized, jobs[id] ?? job)
        }
        schedule()
        return view(jobs[id] ?? job)
    }
}
