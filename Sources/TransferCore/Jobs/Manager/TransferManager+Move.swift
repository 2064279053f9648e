import Foundation
import Logging
public import TransferProtocol

extension TransferManager {
    /// Moves a job `caller` may see within its class (`move`): ahead of the others (`first`; a
    /// user's job goes ahead of that user's jobs, root's ahead of everyone's) or just ahead of
    /// another job of the class (`before`). Answers once the records are durable.
    ///
    /// The new position lies between two others; when there is no room left between them, the
    /// class is numbered again with gaps (each renumbered job's record is written too).
    public func move(_ params: Move.Params, caller: UInt32) async throws(CoreError) -> Job {
        if let problem = params.problem {
            throw CoreError(.invalidParameter(params.before != nil ? "before" : "first"), "move: \(problem)")
        }
        let job = try visibleJob(params.id, caller: caller)
        try Self.ensureMovable(job, verb: "moved")
        var target: JobRecord?
        if let before = params.before {
            let other = try visibleJob(before, caller: caller)
            try Self.ensureMovable(other, verb: "moved before")
            guard other.priorityClass == job.priorityClass else {
                throw CoreError(
                    .invalidParameter("before"),
                    "job \(other.wireID) is \(other.priorityClass.rawValue) and job \(job.wireID) \(job.priorityClass.rawValue): move orders jobs within a class; "
                        + "give them the same class first (transferctl priority \(job.wireID) \(other.priorityClass.rawValue))")
            }
            target = other
        }
        var changed: [String: JobRecord] = [:]
        var position = place(job, before: target, caller: caller)
        if position == nil {
            for record in renumbered(job.priorityClass) { changed[record.id] = record }
            position = place(job, before: target.flatMap { changed[$0.id] ?? $0 }, caller: caller)
        }
        guard let position else {
            throw CoreError(.internalFailure, "no position was found for job \(job.id) in its class; nothing was moved")
        }
        var moved = changed[job.id] ?? job
        moved.position = position
        changed[job.id] = moved
        var changes: [Journal.Change] = []
        for record in changed.values { changes.append(try jobs.update(record)) }
        // Requeued in their new places; a job moved before one that continues a stopped transfer
        // joins it ahead of the rest of the class.
        let lane = target.flatMap { queue.key(of: $0.id)?.lane } ?? 1
        for record in changed.values where queue.contains(record.id) {
            queueJob(record, lane: record.id == job.id ? lane : queue.key(of: record.id)?.lane ?? 1)
        }
        do {
            try await commit(changes)
        } catch {
            throw Self.notSaved(error, what: "the move")
        }
        logger(forJob: job.id).info("job moved", metadata: ["before": "\(target?.id ?? "all")", "position": "\(position)"])
        emit(.prioritized, jobs[job.id] ?? moved)
        schedule()
        return view(jobs[job.id] ?? moved)
    }

    private static func ensureMovable(_ job: JobRecord, verb: String) throws(CoreError) {
        guard job.state.isTerminal else { return }
        let when = job.finishedAt.map { " at \(WireCoding.formatTimestamp($0))" } ?? ""
        throw CoreError(
            .jobFinished,
            "job \(job.wireID) already \(job.state.rawValue)\(when); only a queued, waiting or running job can be \(verb): pick an unfinished one, or \(job.runAgainHint(as: job.wireID))")
    }

    /// A position for `job` ahead of `target` (or of the class, or for a user of the user's own
    /// jobs of it), between it and the job before it; nil when no whole number lies between.
    private func place(_ job: JobRecord, before target: JobRecord?, caller: UInt32) -> Int64? {
        var peers: [UnfinishedPlace] = []
        jobs.forEachUnfinishedPlace { place in
            if place.id != job.id, place.priority == job.priorityClass, target != nil || caller == 0 || place.owner == caller { peers.append(place) }
        }
        guard let target else {
            guard let front = peers.map(\.position).min() else { return job.queuePosition }
            let (position, overflow) = front.subtractingReportingOverflow(JobRecord.positionGap)
            return overflow ? nil : position
        }
        let limit = (target.queuePosition, target.order)
        let previous = peers.filter { ($0.position, $0.order) < limit }.map(\.position).max()
        guard let previous else {
            let (position, overflow) = target.queuePosition.subtractingReportingOverflow(JobRecord.positionGap)
            return overflow ? nil : position
        }
        let (room, overflow) = target.queuePosition.subtractingReportingOverflow(previous)
        guard !overflow, room >= 2 else { return nil }
        return previous + room / 2
    }

    /// The unfinished jobs of `priority` with positions spaced `positionGap` apart in their
    /// current order (whole-number room for further moves).
    private func renumbered(_ priority: JobPriority) -> [JobRecord] {
        var places: [UnfinishedPlace] = []
        jobs.forEachUnfinishedPlace { if $0.priority == priority { places.append($0) } }
        // A light queued job's record is read here: renumbering is rare.
        let members = places.sorted { ($0.position, $0.order) < ($1.position, $1.order) }.compactMap { jobs[$0.id] }
        return members.enumerated().map { index, job in
            var job = job
            job.position = Int64(index + 1) * JobRecord.positionGap
            return job
        }
    }
}
