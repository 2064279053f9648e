import Foundation
public import TransferProtocol

/// Job events: numbering, the ordered way out to subscribers, replay of what a session missed,
/// acknowledgements, progress, and the bookkeeping of hooks.
extension TransferManager {
    // MARK: - Emitting

    /// The next event sequence number. Numbers are reserved in the journal a block at a time, well
    /// before they are used, so that numbering continues upwards after a crash.
    func nextSeq() -> UInt64 {
        let (seq, reservation) = outbox.next()
        if let reservation { journal.write([Self.reservation(reservation)]) }
        return seq
    }

    /// Emits a non-terminal event of `job` as it is now.
    func emit(_ type: JobEventType, _ job: JobRecord) {
        let seq = nextSeq()
        outbox.latestSeq[job.id] = seq
        // A subscription made later starts after this number: with nobody listening now, nobody
        // ever hears this event, so it is not built.
        guard hub.hasSubscribers else { return }
        enqueue(JobEvent(seq: seq, type: type, time: Date(), job: view(job)))
    }

    /// Numbers the terminal event of a job that has just ended and marks its hook as due; the
    /// caller writes the record and then enqueues the returned event. The number is in the record,
    /// so the event can be replayed after a restart until its session acknowledges it.
    func ended(_ job: inout JobRecord) -> JobEvent {
        let seq = nextSeq()
        outbox.latestSeq[job.id] = nil
        return job.numberEnd(seq, hookSelector: hookSelector)
    }

    /// The journal record of the sequence numbers reserved up to `seq`.
    static func reservation(_ seq: UInt64) -> Journal.Change {
        .put(key: sequenceKey, value: Array("\(seq)".utf8))
    }

    /// Queues an event for the hub. Events leave in sequence order; a batch holding a terminal
    /// event waits until the journal holds the job's final record, so nobody hears of an end
    /// that a crash could undo.
    func enqueue(_ event: JobEvent) {
        if outbox.enqueue(event) { startDrain() }
    }

    /// Starts the outbox's one drain (`EventOutbox.enqueue` and `free` say when one must start).
    func startDrain() {
        Task { await self.drainOutbox() }
    }

    private func drainOutbox() async {
        while let batch = outbox.nextBatch() {
            if batch.needsSync {
                // A failed sync stops the daemon (the journal's fatal handler): nothing is published
                // and no copy freed then. A full disk only delays the batch until its records are written.
                while true {
                    do {
                        try await journal.sync()
                        break
                    } catch let error as JournalError where error.code == .noSpace {
                        try? await Task.sleep(for: .seconds(1))
                    } catch {
                        return
                    }
                }
            }
            // The ends are on disk: a restart no longer finds these uploads unfinished.
            for copy in batch.copies { spool?.release(copy) }
            batch.events.forEach(hub.publish)
        }
    }

    /// Emits a progress event for each running job whose byte count moved since its last one.
    /// Called about once a second; does nothing while nobody subscribes.
    public func publishProgress() {
        guard hub.hasSubscribers else { return }
        for (id, transfer) in running {
            guard let job = jobs[id], job.state == .running, let progress = engine.progress(jobID: id),
                progress.bytes != transfer.progressShown
            else { continue }
            running[id]?.progressShown = progress.bytes
            emit(.progress, job)
        }
    }

    // MARK: - Subscribing

    /// Starts a subscription for `caller`: with `session`, the session's unacknowledged terminal
    /// events are replayed; with `ids`, the latest event of each job. Returns once every replayed
    /// event is durable.
    public func subscribe(_ params: Subscribe.Params, caller: UInt32, queueLimit: Int) async throws(CoreError) -> Subscription {
        if let session = params.session { try SubmitValidator.validateSession(session) }
        let all = params.all == true
        guard !all || caller == 0 else {
            throw CoreError(.notPermitted, "only root may follow every user's jobs: leave out \(parameter: .subscribeAll) to follow yours")
        }
        // Keys, and the same jobs as events show them: owner and id (two users may share an id).
        var named: [JobRecord]?
        if let ids = params.ids {
            named = []
            for id in ids { named?.append(try visibleJob(id, caller: caller)) }
        }
        let wanted = named.map { Set($0.map(\.id)) }
        let wantedShown = named.map { Set($0.map { "\($0.owner):\($0.wireID)" }) }
        let session = params.session
        // Root sees any job it names by id, and everyone's jobs when it asks for all.
        let seesEveryone = caller == 0 && session == nil && (all || wanted != nil)
        var replay: [JobEvent]
        if let after = params.after {
            replay = changedJobs(after: after, owner: seesEveryone ? nil : caller, session: session, ids: wanted)
        } else if let session {
            replay = []
            for (id, _) in jobs.unacknowledged(owner: caller, session: session) where wanted?.contains(id) ?? true {
                if let record = jobs[id] { replay.append(terminalEvent(of: record)) }
            }
        } else if let wanted {
            replay = wanted.compactMap { jobs[$0] }.map { job in
                job.state.isTerminal
                    ? terminalEvent(of: job)
                    : JobEvent(
                        seq: outbox.latestSeq[job.id] ?? 0, type: job.paused == true && job.state == .queued ? .paused : JobEventType(latestFor: job.state),
                        time: Date(), job: view(job))
            }
        } else {
            replay = []
        }
        replay.sort { $0.seq < $1.seq }
        let filter: @Sendable (JobEvent) -> Bool = { event in
            (seesEveryone || event.job.owner == caller)
                && (session == nil || event.job.session == session)
                && (wantedShown?.contains(event.job.ownedID) ?? true)
        }
        let subscription = Subscription(
            id: nextSubscriptionID, limit: queueLimit, owner: caller, budget: hub.budget, startSeq: outbox.lastSeq, replay: replay, filter: filter)
        nextSubscriptionID += 1
        hub.add(subscription)
        if replay.contains(where: \.type.isTerminal) {
            // A replayed end, like a live one, comes after the copies of ended uploads are freed.
            let copies = outbox.copiesBeforeSync
            try await sync()
            for copy in copies { spool?.release(copy) }
        }
        return subscription
    }

    /// The terminal event a finished job had, as it is replayed.
    func terminalEvent(of job: JobRecord) -> JobEvent {
        JobEvent(
            seq: job.eventSeq ?? 0, type: JobEventType(latestFor: job.state), time: job.finishedAt ?? job.createdAt,
            job: job.wireJob())
    }

    /// Marks the terminal events of `caller`'s `session` up to `seq` as delivered; returns how many
    /// that were not already. Answers once the marks are durable.
    public func ack(session: String, through seq: UInt64, caller: UInt32) async throws(CoreError) -> Int {
        try SubmitValidator.validateSession(session)
        var changes: [Journal.Change] = []
        let due = jobs.unacknowledged(owner: caller, session: session).filter { ($0.summary.eventSeq ?? .max) <= seq }
        for (id, _) in due {
            if let change = try jobs.update(id, { $0.acknowledged = true }) { changes.append(change) }
        }
        do {
            try await commit(changes)
        } catch {
            throw CoreError(.internalFailure, "the acknowledgement could not be written to the journal (\(error)); acknowledge again")
        }
        // An acknowledged inbox download has been handed over: its file goes.
        dropInboxFiles(of: due.map(\.id))
        return changes.count
    }

    // MARK: - Hooks

    /// The finished jobs whose hook has not yet succeeded, in the order they ended, and a
    /// subscription to the terminal events of the jobs `selector` picks from now on.
    public func subscribeToHooks(_ selector: @escaping @Sendable (Job) -> Bool) -> (pending: [Job], subscription: Subscription) {
        let pending = jobs.dueHooks.sorted { ($0.summary.eventSeq ?? 0) < ($1.summary.eventSeq ?? 0) }.compactMap { jobs[$0.id]?.wireJob() }
        let subscription = Subscription(
            id: nextSubscriptionID, limit: nil, startSeq: outbox.lastSeq, replay: [],
            filter: { $0.type.isTerminal && selector($0.job) })
        nextSubscriptionID += 1
        hub.add(subscription)
        return (pending, subscription)
    }

    /// Records that the hook of a finished job succeeded (or no longer applies), so it does not
    /// run again after a restart.
    /// `jobID` is the job as events show it, or its key; `UID:ID` names it unambiguously.
    public func hookFinished(jobID: String) async {
        // A finished job's record is read from the journal: once.
        guard let key = jobKey(jobID, caller: 0), var job = jobs[key], job.hookPending == true else { return }
        job.hookPending = nil
        guard let change = try? jobs.update(job) else { return }
        try? await commit([change])
    }

    /// Whether a finished job's hook is still due (the job may have been dropped meanwhile).
    public func hookIsPending(jobID: String) -> Bool {
        jobKey(jobID, caller: 0).flatMap { jobs.summary($0) }?.hookPending == true
    }
}
