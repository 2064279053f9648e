import Foundation
public import TransferProtocol

extension TransferManager {
    /// One job, or one page of the jobs `caller` may list that match `query`'s filters. Root
    /// (uid 0) may see any job by id, and every user's jobs with `all` or `owner`.
    ///
    /// A page costs one pass over the jobs' summaries and the decoding of the jobs it returns,
    /// whatever the number of jobs kept.
    public func status(_ query: Status.Params, caller: UInt32) throws(CoreError) -> Status.Result {
        if let id = query.id {
            return Status.Result(jobs: [view(try visibleJob(id, caller: caller))], hold: held ? true : nil)
        }
        let all = query.all == true
        guard caller == 0 || (!all && (query.owner == nil || query.owner == caller)) else {
            let parameter: CoreMessage.Parameter = all ? .statusAll : .statusOwner
            throw CoreError(.notPermitted, "only root may list other users' jobs: leave out \(parameter: parameter) to list yours")
        }
        let limit = query.limit ?? Status.defaultLimit
        guard (1...Status.maxLimit).contains(limit) else {
            throw CoreError(.invalidParameter("limit"), "\(parameter: .statusLimit) must be between 1 and \(Status.maxLimit); ask for the rest page by page with the next cursor")
        }
        var after: UInt64?
        if let cursor = query.cursor {
            guard let order = UInt64(cursor) else {
                throw CoreError(.invalidParameter("cursor"), "\(parameter: .statusCursor) '\(cursor.prefix(40))' is not a cursor this daemon gave: pass next_cursor from the previous page unchanged")
            }
            after = order
        }
        let newestFirst = query.newestFirst == true
        let owner: UInt32? = query.owner ?? (all ? nil : caller)
        let wantedStates = query.states.map(Set.init)
        // `paused` widens `states` by the paused jobs, or alone selects only them.
        let wantsPaused = query.paused == true
        let createdAfter = query.createdAfter?.timeIntervalSince1970
        let createdBefore = query.createdBefore?.timeIntervalSince1970
        var counts: [JobState: Int] = [:]
        var matches: [(order: UInt64, id: String)] = []
        var total = 0
        jobs.forEachSummary { id, job in
            if let owner, job.owner != owner { return }
            if let session = query.session, job.session != session { return }
            if let createdAfter, job.createdAt < createdAfter { return }
            if let createdBefore, job.createdAt >= createdBefore { return }
            counts[job.state, default: 0] += 1
            if wantsPaused || wantedStates != nil {
                let inStates = wantedStates?.contains(job.state) ?? false
                guard inStates || (wantsPaused && !job.state.isTerminal && jobs.isPaused(id)) else { return }
            }
            total += 1
            if let after, newestFirst ? job.order >= after : job.order <= after { return }
            matches.append((job.order, id))
        }
        // The first `limit` in page order; one past them says whether another page follows.
        matches.sort { newestFirst ? $0.order > $1.order : $0.order < $1.order }
        let page = matches.prefix(limit)
        let next = matches.count > limit ? page.last.map { String($0.order) } : nil
        return Status.Result(
            jobs: page.compactMap { jobs[$0.id].map(view) }, total: total,
            counts: Dictionary(uniqueKeysWithValues: counts.map { ($0.key.rawValue, $0.value) }), nextCursor: next,
            hold: held ? true : nil)
    }
}
