import Foundation
import Logging
public import TransferProtocol

/// Pausing and resuming jobs, and the daemon-wide hold.
///
/// A paused job stays `queued` with `paused` set: it keeps its place in submission order and its
/// partial file, and the scheduler passes it over. A running one is stopped by the engine as
/// shutdown stops it (partial file synced, `.stopped` with the bytes it holds), so a resume
/// continues from there with a ranged request. A waiting one loses its retry timer and becomes
/// `queued`. The flag is journaled with the job; the hold under `holdKey`.
extension TransferManager {
    /// Pauses the jobs `selection` names that `caller` may see; answers once the records are
    /// durable and the running ones among them have stopped. Root's `all` also turns the
    /// daemon-wide hold on: no transfer starts until `resume` with `all`.
    public func pause(_ selection: JobSelection, caller: UInt32) async throws(CoreError) -> JobSelectionResult {
        let (ids, notFound) = try select(selection, caller: caller, verb: "pause")
        let holdChanges = selection.all == true && caller == 0 && !held
        var changes: [Journal.Change] = []
        var announce: [String] = []
        var toStop: [String] = []
        for id in ids {
            guard var job = jobs[id], !job.state.isTerminal, job.paused != true else { continue }
            job.paused = true
            // Resumed, it takes its place by submission order, as any paused job.
            job.yielded = nil
            switch job.state {
            case .running:
                toStop.append(id)
            case .queued:
                queue.remove(id)
                startTimers.removeValue(forKey: id)?.cancel()
                announce.append(id)
            case .waiting:
                retryTimers.removeValue(forKey: id)?.cancel()
                job.state = .queued
                job.nextAttemptAt = nil
                announce.append(id)
            case .completed, .failed, .cancelled:
                continue
            }
            changes.append(try jobs.update(job))
        }
        if holdChanges {
            held = true
            changes.append(.put(key: Self.holdKey, value: Array("true".utf8)))
        }
        // Stopped before the records are synced: the stop's own report is applied only after
        // the flag is set, and a crash meanwhile restarts the job from its checkpoint, paused or not.
        for id in toStop where jobs[id]?.state == .running && jobs[id]?.paused == true {
            switch engine.stop(jobID: id, reason: .pause) {
            case .stopping:
                running[id]?.stopping = .pause
            case .landing:
                // The file is complete and being moved into place: it completes.
                if let change = try? jobs.update(id, { $0.paused = nil }) { changes.append(change) }
            case .notRunning:
                // Its end is on its way: an interruption holds it paused; a completion or failure ends it.
                break
            }
        }
        do {
            try await commit(changes)
        } catch {
            throw Self.notSaved(error, what: "the pause")
        }
        if holdChanges { logger.notice("new transfers are held (pause --all); resume --all lifts the hold", metadata: ["uid": "\(caller)"]) }
        for id in announce {
            guard let job = jobs[id], job.paused == true, job.state == .queued else { continue }
            logger(forJob: id).info("job paused", metadata: ["bytes": "\(job.checkpointBytes)"])
            emit(.paused, job)
        }
        // The answer shows the running ones stopped, with the bytes they kept.
        for id in ids where running[id]?.stopping == .pause {
            await withCheckedContinuation { running[id]?.endWaiters.append($0) }
        }
        return result(ids, notFound: notFound, hold: holdAnswer(selection, caller: caller))
    }

    /// Resumes the paused jobs `selection` names that `caller` may see: each is queued again in its
    /// submission order (or waits for its start time) and continues from its checkpoint. Root's
    /// `all` also lifts the daemon-wide hold.
    public func resume(_ selection: JobSelection, caller: UInt32) async throws(CoreError) -> JobSelectionResult {
        let (ids, notFound) = try select(selection, caller: caller, verb: "resume")
        let holdChanges = selection.all == true && caller == 0 && held
        guard acceptingWork else { throw CoreError(.shuttingDown, "transferd is stopping; resume once it has restarted") }
        var changes: [Journal.Change] = []
        var resumed: [String] = []
        for id in ids {
            guard var job = jobs[id], !job.state.isTerminal, job.paused == true else { continue }
            job.paused = nil
            changes.append(try jobs.update(job))
            // One still stopping is queued when its stop is reported (`stoppedForPause`).
            if job.state == .queued { resumed.append(id) }
        }
        if holdChanges {
            held = false
            changes.append(.delete(key: Self.holdKey))
        }
        do {
            try await commit(changes)
        } catch {
            throw Self.notSaved(error, what: "the resume")
        }
        if holdChanges { logger.notice("the hold on new transfers is lifted (resume --all)", metadata: ["uid": "\(caller)"]) }
        for id in resumed {
            // A pause or a cancel may have come while the records were syncing.
            guard let job = jobs[id], job.state == .queued, job.paused != true else { continue }
            logger(forJob: id).info("job resumed", metadata: ["bytes": "\(job.checkpointBytes)"])
            requeue(job)
            emit(.resumed, job)
        }
        schedule()
        return result(ids, notFound: notFound, hold: holdAnswer(selection, caller: caller))
    }

    /// Whether the daemon-wide hold is on.
    public var isHeld: Bool { held }

    /// Applies the end of a transfer a pause stopped (or that failed on the way): the job is
    /// `queued` from what it kept, held while still paused, queued again if resumed meanwhile.
    /// The caller frees the slot (`transferEnded`).
    func stoppedForPause(_ record: JobRecord, error: JobError?) {
        var job = record
        job.logAttempt(job.paused == true ? .paused : .stopped, error: error)
        job.state = .queued
        job.nextAttemptAt = nil
        save(job)
        if job.paused == true {
            logger(forJob: job.id).info(
                "transfer paused", metadata: ["bytes": "\(job.checkpointBytes)", "error": "\(error?.message ?? "none")"])
            emit(.paused, job)
        } else {
            logger(forJob: job.id).info("transfer stopped and resumed", metadata: ["bytes": "\(job.checkpointBytes)"])
            requeue(job)
            emit(.queued, job)
        }
    }

    /// Puts a queued job back in its place in the queue, or arms its start time.
    private func requeue(_ job: JobRecord) {
        guard !queue.contains(job.id) else { return }
        if let notBefore = job.notBefore, notBefore > Date() {
            armStart(job.id, at: notBefore)
            return
        }
        queueJob(job)
    }

    /// The unfinished jobs `selection` names that `caller` may see, in submission order, and the
    /// ids that name none. A finished job named by id is refused: there is nothing to pause or
    /// resume.
    func select(_ selection: JobSelection, caller: UInt32, verb: String) throws(CoreError) -> (ids: [String], notFound: [String]) {
        if let problem = selection.problem {
            let parameter = selection.ids != nil ? "ids" : selection.session != nil ? "session" : "all"
            throw CoreError(.invalidParameter(parameter), "\(verb): \(problem)")
        }
        if let ids = selection.ids {
            var seen = Set<String>()
            var found: [JobRecord] = []
            var notFound: [String] = []
            for id in ids where seen.insert(id).inserted {
                guard let job = jobKey(id, caller: caller).flatMap({ jobs[$0] }), caller == 0 || job.owner == caller else {
                    notFound.append(String(id.prefix(Limits.maxJobIDLength)))
                    continue
                }
                if job.state.isTerminal {
                    let when = job.finishedAt.map { " at \(WireCoding.formatTimestamp($0))" } ?? ""
                    throw CoreError(
                        .jobFinished,
                        "job \(id) already \(job.state.rawValue)\(when); only a queued, waiting or running job can be \(verb)d "
                            + "(nothing was \(verb)d): \(job.runAgainHint(as: id)), or leave it out")
                }
                found.append(job)
            }
            return (found.sorted { $0.order < $1.order }.map(\.id), notFound)
        }
        var session: String?
        if let name = selection.session {
            try SubmitValidator.validateSession(name)
            session = name
        }
        var chosen: [UnfinishedPlace] = []
        jobs.forEachUnfinishedPlace { job in
            if (caller == 0 || job.owner == caller) && (session == nil || job.session == session) { chosen.append(job) }
        }
        return (chosen.sorted { $0.order < $1.order }.map(\.id), [])
    }

    /// `hold` in an answer: true while the hold is on (so a user sees why resumed jobs wait),
    /// false after root's `all` lifted it, else absent.
    private func holdAnswer(_ selection: JobSelection, caller: UInt32) -> Bool? {
        held ? true : (selection.all == true && caller == 0 ? false : nil)
    }

    private func result(_ ids: [String], notFound: [String], hold: Bool?) -> JobSelectionResult {
        JobSelectionResult(jobs: ids.compactMap { jobs[$0].map(view) }, notFound: notFound, hold: hold)
    }
}
