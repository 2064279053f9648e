import Foundation
import TransferProtocol

extension TransferManager {
    /// The latest event of each job that changed after `after`, for a subscriber that reconnects:
    /// a finished job's end when it is numbered after `after`, an unfinished job's state when its
    /// latest event is. An unfinished job with no event since the daemon started has not changed
    /// since (the daemon's own restart aside, which shows when the job starts again). `owner`
    /// nil: every user's jobs; `ids`: only those keys.
    func changedJobs(after: UInt64, owner: UInt32?, session: String?, ids: Set<String>?) -> [JobEvent] {
        var changed: [String] = []
        jobs.forEachSummary { id, summary in
            if let owner, summary.owner != owner { return }
            if let session, summary.session != session { return }
            if let ids, !ids.contains(id) { return }
            let seq = summary.state.isTerminal ? summary.eventSeq : outbox.latestSeq[id]
            if let seq, seq > after { changed.append(id) }
        }
        return changed.compactMap { id in
            guard let job = jobs[id] else { return nil }
            if job.state.isTerminal { return terminalEvent(of: job) }
            let type: JobEventType = job.paused == true && job.state == .queued ? .paused : JobEventType(latestFor: job.state)
            return JobEvent(seq: outbox.latestSeq[id] ?? after, type: type, time: Date(), job: view(job))
        }
    }
}
