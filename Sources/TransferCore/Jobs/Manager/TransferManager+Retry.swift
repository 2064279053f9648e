import Foundation
public import TransferProtocol
import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Removing, cleaning out and retrying finished jobs.
extension TransferManager {
    /// Forgets a finished job of `caller`'s (root: anyone's): its record, its partial file, and its
    /// terminal event if its session has not acknowledged it. Returns the job as it was, and
    /// whether such an event was dropped.
    public func remove(id: String, caller: UInt32) async throws(CoreError) -> (job: Job, droppedEvent: Bool) {
        let job = try visibleJob(id, caller: caller)
        guard job.state.isTerminal else {
            throw CoreError(
                .jobNotFinished, "job \(id) is \(job.state.rawValue), and only a finished job can be removed: cancel it first (transferctl cancel \(id))")
        }
        let dropped = FinishedJob(job).unacknowledgedSession != nil
        forget(ids: [job.id])
        do {
            try await commit(Self.deletions(of: job.id))
        } catch {
            throw Self.notSaved(error, what: "the removal")
        }
        logger(forJob: job.id).info("job removed")
        return (job.wireJob(), dropped)
    }

    /// Forgets `caller`'s finished jobs (every user's with `all`, root only) that ended in one of
    /// `states` at least `olderThan` seconds ago. Returns how many, and how many of them had an end
    /// their session had not acknowledged.
    public func clean(states: [JobState]?, olderThan: Double?, all: Bool, caller: UInt32) async throws(CoreError) -> (removed: Int, droppedEvents: Int) {
        guard !all || caller == 0 else {
            throw CoreError(.notPermitted, "only root may clean out every user's jobs: leave out all to clean out yours")
        }
        let wanted = Set(states ?? [.completed, .failed, .cancelled])
        if let unfinished = wanted.first(where: { !$0.isTerminal }) {
            throw CoreError(.invalidParameter("states"), "clean forgets finished jobs; '\(unfinished.rawValue)' is not a finished state: give completed, failed or cancelled")
        }
        if let olderThan, !(olderThan >= 0 && olderThan.isFinite) {
            throw CoreError(.invalidParameter("older_than_seconds"), "older_than_seconds must be a number of seconds, 0 or more")
        }
        let cutoff = Date().timeIntervalSince1970 - (olderThan ?? 0)
        var chosen: [String] = []
        var dropped = 0
        for (id, job) in jobs.finishedJobs where (all || job.owner == caller) && wanted.contains(job.state) && (job.finishedAt ?? 0) <= cutoff {
            chosen.append(id)
            if job.unacknowledgedSession != nil { dropped += 1 }
        }
        forget(ids: chosen)
        do {
            try await commit(chosen.flatMap(Self.deletions(of:)))
        } catch {
            throw Self.notSaved(error, what: "the removals")
        }
        if !chosen.isEmpty { logger.info("finished jobs removed", metadata: ["count": "\(chosen.count)", "uid": "\(caller)"]) }
        return (chosen.count, dropped)
    }

    /// Queues a failed or cancelled job again, at the end of the queue, under its id and with its
    /// limits counted from now. A download keeps its partial file when it still holds what the
    /// last checkpoint says; the server's validator then decides whether it is appended to.
    public func retry(id: String, caller: UInt32) async throws(CoreError) -> Job {
        var job = try visibleJob(id, caller: caller)
        switch job.state {
        case .failed, .cancelled:
            break
        case .completed:
            throw CoreError(
                .jobFinished, "job \(id) completed; to fetch it again, submit it with replace (transferctl submit --replace --id \(id) …)")
        case .queued, .running, .waiting:
            throw CoreError(.jobNotFinished, "job \(id) is \(job.state.rawValue) already; only a failed or cancelled job can be retried")
        }
        guard !job.isUpload else {
            throw CoreError(
                .jobFinished, "job \(id) is an upload, and its copy of the file was freed when it ended: upload the file again (transferctl upload)")
        }
        guard acceptingWork else { throw CoreError(.shuttingDown, "transferd is stopping and accepts no new jobs; retry once it has restarted") }
        try ensureNoWriter(of: job.destination, for: job.owner, otherwise: "retry later")
        try ensureRoom(for: job.owner)
        try ensureSpace(forRecordOf: job.journalWeight)
        if !Self.partialHolds(job) {
            job.checkpointBytes = 0
            job.parts = nil
            job.validator = nil
            job.totalBytes = nil
            job.partialInode = nil
            job.furthestBytes = nil
        }
        job.state = .queued
        job.paused = nil
        job.order = nextOrder
        nextOrder += 1
        job.restartedAt = Date()
        job.finishedAt = nil
        job.error = nil
        job.nextAttemptAt = nil
        job.failuresInARow = nil
        job.eventSeq = nil
        job.acknowledged = nil
        job.hookPending = nil
        job.sha256 = nil
        // From here on, the job's key: the id as the caller wrote it may leave its owner out.
        let id = job.id
        let change = try jobs.update(job)
        do {
            try await commit([change])
        } catch {
            throw Self.notSaved(error, what: "the retry")
        }
        logger(forJob: id).info("job queued again", metadata: ["bytes": "\(job.checkpointBytes)"])
        // A cancel may have come while the record was syncing.
        if let current = jobs[id], current.state == .queued {
            queueJob(current)
            emit(.queued, current)
            schedule()
        }
        return view(jobs[id] ?? job)
    }

    /// Whether a job's partial file is there, a regular file, and holds at least its last checkpoint.
    static func partialHolds(_ job: JobRecord) -> Bool {
        guard job.checkpointBytes > 0, job.validator != nil else { return false }
        var info = stat()
        guard lstat(job.partialPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return Int64(info.st_size) >= job.checkpointBytes
    }

    /// Drops finished jobs from the table with the files they kept: a failed download's partial
    /// file (kept for a retry; the others' are gone already) and an inbox download's file. The
    /// caller writes the journal's deletions.
    func forget(ids: [String]) {
        dropInboxFiles(of: ids)
        for id in ids {
            // Only a failed job's whole record is read back: the others need none of it.
            if jobs.summary(id)?.state == .failed, let job = jobs[id] { PartialFile.remove(job.partialPath, roots: roots(for: job)) }
            jobs[id] = nil
            outbox.latestSeq[id] = nil
        }
    }
}

extension JobRecord {
    /// How to run this ended job again, for the messages that refuse to pause, resume, move or
    /// reprioritise it: `retry` for a failed or cancelled download, a new submit otherwise.
    func runAgainHint(as id: String) -> String {
        switch state {
        case .failed, .cancelled:
            return isUpload
                ? "to run it again, upload the file again (transferctl upload)"
                : "to run it again, retry it (transferctl retry \(id))"
        case .completed:
            return "to fetch it again, submit it with replace (transferctl submit --replace --id \(id) …)"
        case .queued, .running, .waiting:
            return ""
        }
    }
}
