import Foundation
public import TransferProtocol
import Logging
import Metrics
#if canImport(Glibc)
import Glibc
#endif

extension TransferManager {
    // MARK: - Requests

    /// Accepts a download for `owner` (uid), whose process ran with `group` (gid) when known;
    /// returns once its record is on disk.
    public func submit(_ params: Submit.Params, owner: UInt32, group: UInt32? = nil) async throws(CoreError) -> Job {
        guard let result = await submit([params], owner: owner, group: group).first else {
            throw CoreError(.internalFailure, "the submit produced no answer")
        }
        return try result.get()
    }

    /// Accepts several downloads for `owner` in one durable step: the records of every accepted
    /// job are written together and synced once (one group commit). Returns each submit's job or
    /// why it was refused, in order; a refused submit does not stop the others.
    public func submit(_ batch: [Submit.Params], owner: UInt32, group: UInt32? = nil) async -> [Result<Job, CoreError>] {
        let startedAt = MonotonicClock.nanoseconds()
        defer { metrics.submitDuration.recordNanoseconds(MonotonicClock.nanoseconds() &- startedAt) }
        return await accept(await check(batch, owner: owner, group: group), owner: owner, group: group)
    }

    /// Accepts submits whose waiting checks are done (`check`) in one durable step, as `submit`.
    /// Submits checked apart may be accepted together; what `accept` checks itself, it checks
    /// without a suspension point, so that nothing changes between the checks and the insertion.
    public func accept(_ batch: [CheckedSubmit], owner: UInt32, group: UInt32? = nil) async -> [Result<Job, CoreError>] {
        var results = [Result<Job, CoreError>](repeating: .failure(CoreError(.internalFailure, "not submitted")), count: batch.count)
        var urls: [URL?] = []
        var checked = Set<Int>()
        for (index, submit) in batch.enumerated() {
            switch submit.outcome {
            case .success(let passed):
                urls.append(passed.url)
                if passed.destinationChecked { checked.insert(index) }
            case .failure(let error):
                results[index] = .failure(error)
                urls.append(nil)
            }
        }
        let batch = batch.map(\.params)
        var accepted: [(index: Int, job: JobRecord, url: URL)] = []
        var answersExisting = false
        // Checked once for the batch: new work is refused before the journal's filesystem fills up.
        let spaceProblem: CoreError?
        do throws(CoreError) {
            try ensureSpace(forRecordOf: batch.reduce(0) { $0 + $1.journalWeight })
            spaceProblem = nil
        } catch {
            spaceProblem = error
        }
        for (index, params) in batch.enumerated() {
            guard let url = urls[index] else { continue }
            do throws(CoreError) {
                // A submit that an existing job answers adds nothing to the journal.
                if let spaceProblem, !(params.replace != true && (params.id.map(jobs.contains) ?? false)) { throw spaceProblem }
                switch try admit(params, url: url, owner: owner, group: group, destinationChecked: checked.contains(index)) {
                case .existing(let job):
                    answersExisting = true
                    results[index] = .success(view(job))
                case .new(let job, let url):
                    jobs[job.id] = job
                    accepted.append((index, job, url))
                }
            } catch {
                results[index] = .failure(error)
            }
        }
        var changes: [Journal.Change] = []
        var encoded: [(index: Int, job: JobRecord, url: URL)] = []
        var stateRecords: [[UInt8]] = []
        for (index, job, url) in accepted {
            do {
                // The large fields once, then the small state record every change rewrites.
                let stateRecord = try encode(job)
                if job.detached == true {
                    changes.append(try requestChange(job))
                } else if batch[index].replace == true {
                    // The job this one replaces may have left large fields under the same key.
                    changes.append(.delete(key: job.requestKey))
                }
                changes.append(.put(key: job.journalKey, value: stateRecord))
                encoded.append((index, job, url))
                stateRecords.append(stateRecord)
            } catch {
                jobs[job.id] = nil
                results[index] = .failure(CoreError(.internalFailure, "the job could not be encoded (\(error)); it was not accepted"))
            }
        }
        accepted = encoded
        if !changes.isEmpty || answersExisting {
            // A job answered as existing may still be syncing from its first submit: this waits for that too.
            do {
                try await commit(changes)
            } catch {
                let refusal = Self.notSaved(error, what: "the job")
                // Records kept for a later write (the disk was full) must not bring refused jobs back.
                journal.withdraw(keys: Set(accepted.flatMap { [$0.job.journalKey, $0.job.requestKey] }))
                for (index, job, _) in accepted {
                    jobs[job.id] = nil
                    if let name = job.spool { spool?.unclaim(name) }
                    results[index] = .failure(refusal)
                }
                for index in results.indices { if case .success = results[index] { results[index] = .failure(refusal) } }
                return results
            }
        }
        for (index, job, url) in accepted {
            logger(forJob: job.id).info("job accepted", metadata: ["url": "\(Redaction.url(url))", "destination": "\(job.destination)"])
            // A cancel may have arrived while the record was syncing.
            if let current = jobs[job.id], current.state == .queued {
                emit(.queued, current)
                if let notBefore = current.notBefore, notBefore > Date() {
                    armStart(job.id, at: notBefore)
                } else {
                    queueJob(current)
                }
            }
            results[index] = .success(view(jobs[job.id] ?? job))
        }
        schedule()
        holdLight(zip(accepted.map(\.job), stateRecords))
        return results
    }

    /// Holds the downloads just accepted that still wait in the queue, unchanged, as start-up holds
    /// those it replays (`QueuedJob`): their records stay in the journal until they start, so a
    /// script that hands over a million URLs does not keep a million records in memory. A short
    /// queue is left whole: its jobs start soon, and reading each record back would cost more than
    /// the memory it saves. `stateRecord` is the job's record as written; a job it no longer
    /// describes stays whole.
    private func holdLight(_ submitted: some Sequence<(JobRecord, [UInt8])>) {
        guard queue.count > Self.queuedHeldWhole else { return }
        var count = 0
        for (job, stateRecord) in submitted where running[job.id] == nil && jobs[job.id] == job {
            guard var (light, _) = stateRecord.withUnsafeBytes({ JobSummaryScan.queued(of: $0) }) else { continue }
            light.summary.weight = UInt32(clamping: job.journalWeight)
            jobs.insertQueued(job.id, light)
            count += 1
        }
        HeapPolicy.heldLight(count)
    }

    /// How many queued jobs a submit leaves whole before it holds the ones it adds light.
    static let queuedHeldWhole = 1_000

    /// What checking one submit found: a job submitted before under the same id, or a new record.
    enum SubmitCheck {
        case existing(JobRecord)
        case new(JobRecord, URL)
    }

    /// Checks one submit (whose `url` passed the host rules) against the rules, the owner's limit
    /// of unfinished jobs and the destinations already being written; returns the record to
    /// write, or the existing job its id names. Unless `destinationChecked` (by `DestinationChecks`,
    /// off the actor), the filesystem is checked here too, creating directories when asked.
    func admit(_ params: Submit.Params, url: URL, owner: UInt32, group: UInt32?, destinationChecked: Bool) throws(CoreError) -> SubmitCheck {
        guard acceptingWork else { throw CoreError(.shuttingDown, "transferd is stopping and accepts no new jobs; submit again once it has restarted") }
        let isUpload = try SubmitValidator.validateKind(params) == .upload
        let limitRate = try SubmitValidator.validateLimitRate(params.limitRate)
        let segments = try SubmitValidator.validateSegments(params.segments, isUpload: isUpload)
        try SubmitValidator.validateLabel(params.label)
        if let pem = params.cacert, !Trust.isPEM(pem) {
            throw CoreError(
                .invalidParameter("cacert"),
                "cacert must be the text of PEM CA certificates (-----BEGIN CERTIFICATE-----…), at most \(Trust.maxJobPEMBytes / 1024) KiB")
        }
        var replaced: JobRecord?
        if let id = params.id {
            try SubmitValidator.validateID(id)
            if let existing = ownedKey(id, owner: owner).flatMap({ jobs[$0] }) {
                guard existing.idChosenByClient, existing.owner == owner else {
                    throw Self.idConflict(id)
                }
                if existing.state.isTerminal {
                    // A cron job with a fixed id must not get last night's job back without a word.
                    guard params.replace == true else {
                        let when = existing.finishedAt.map { " at \(WireCoding.formatTimestamp($0))" } ?? ""
                        throw CoreError(
                            .jobExists,
                            "job \(id) already exists and \(existing.state.rawValue)\(when): submit with replace (transferctl submit --replace) "
                                + "to start it again under this id, remove it first (transferctl remove \(id)), or choose another id")
                    }
                    replaced = existing
                } else if !isUpload {
                    guard existing.matches(params) else {
                        throw Self.idConflict(id)
                    }
                    return .existing(existing)
                }
            }
        }
        if isUpload {
            try SubmitValidator.validateTimes(notBefore: params.notBefore, deadline: params.deadline)
            var check = try admitUpload(params, url: url, owner: owner, group: group, replacing: replaced != nil)
            if case .new(var job, let url) = check {
                job.notBefore = params.notBefore
                job.deadline = params.deadline
                job.limitRate = limitRate
                job.cacert = params.cacert
                job.label = params.label
                check = .new(job, url)
                if let replaced { forget(ids: [replaced.id]) }
            }
            return check
        }
        // No destination: the daemon's inbox keeps the file for the submitter.
        let inbox = params.destination == nil ? configuration.inbox : nil
        if let inbox, !destinationChecked {
            try inbox.admit(params, owner: owner, budget: configuration.inboxBytesPerUser, reserve: configuration.diskReserveBytes)
        }
        guard params.destination != nil || inbox != nil else {
            throw CoreError(.invalidParameter("destination"), "a download needs destination: the absolute path of the file to create")
        }
        if params.conditional == true, inbox != nil {
            throw CoreError(
                .invalidParameter("conditional"),
                "conditional compares with the file at the destination: give the destination it keeps (a download without destination has none)")
        }
        // A conditional download replaces the destination when the server has a new version.
        let overwrite = inbox != nil || params.conditional == true || (params.overwrite ?? false)
        // Done already when DestinationChecks ran for this submit.
        if let destination = params.destination, !destinationChecked {
            try DestinationChecks.checkParameters(params)
            let downloadOwner = DownloadOwner(uid: owner, gid: group)
            if params.createDirectories == true {
                try DirectoryCreator.createDirectories(of: destination, roots: configuration.allowedRoots, owner: downloadOwner)
            }
            try SubmitValidator.validateDestination(destination, overwrite: overwrite, roots: configuration.allowedRoots, owner: downloadOwner)
            if let size = params.size {
                try SubmitValidator.validateSpace(for: size, destination: destination, reserve: configuration.diskReserveBytes)
            }
        }
        let sha256 = try SubmitValidator.validateSHA256(params.sha256)
        try ensureRoom(for: owner)
        try ensureBudget(of: owner, adding: params.journalWeight)
        if let destination = params.destination {
            try ensureNoWriter(of: destination, for: owner, otherwise: "choose another destination")
        }
        // The key before the job it replaces is forgotten: the same key, so that the new records
        // overwrite the old ones (after it, another user's job could make it another key).
        let id = keyForSubmit(params.id, owner: owner)
        if let replaced { forget(ids: [replaced.id]) }
        let destination = params.destination ?? inbox?.path(owner: owner, id: JobRecord.wireID(ofKey: id)) ?? ""
        var job = JobRecord(
            id: id, order: nextOrder, state: .queued, url: params.url, destination: destination,
            headers: params.headers ?? [:], overwrite: overwrite, owner: owner, ownerGroup: group, idChosenByClient: params.id != nil,
            createdAt: Date(), attempts: 0, checkpointBytes: 0, expectedSha256: sha256, expectedSize: params.size,
            retry: params.retry?.isEmpty == false ? params.retry : nil, session: params.session)
        job.notBefore = params.notBefore
        job.deadline = params.deadline
        job.priority = try SubmitValidator.validatePriority(params.priority).flatMap { $0 == .normal ? nil : $0 }
        job.limitRate = limitRate
        job.segments = segments
        job.cacert = params.cacert
        job.label = params.label
        job.inbox = inbox != nil ? true : nil
        job.conditional = params.conditional == true ? true : nil
        // Headers or certificates are written once apart (`req/<id>`); a download with neither
        // has no record there, and one key fewer for the journal to index.
        job.detached = job.headers.isEmpty && job.cacert == nil ? nil : true
        nextOrder += 1
        return .new(job, url)
    }

    /// Refuses one more unfinished job for `owner` past `max_jobs_per_user`.
    func ensureRoom(for owner: UInt32) throws(CoreError) {
        let unfinished = jobs.unfinishedCount(of: owner)
        guard unfinished < configuration.maxJobsPerUser else {
            throw CoreError(
                .limitReached("max_jobs_per_user"),
                "you already have \(unfinished) unfinished jobs, the most one user may have (max_jobs_per_user): "
                    + "wait for some to finish or cancel some, or ask the administrator to raise the limit")
        }
    }

    /// Refuses a download to `destination` while an unfinished job writes there; `otherwise` is
    /// the way out when that job is another user's, whose id is never named (it would let the
    /// caller follow someone else's work).
    func ensureNoWriter(of destination: String, for owner: UInt32, otherwise: String) throws(CoreError) {
        guard let busyID = jobs.writer(of: destination) else { return }
        let mine = jobs.summary(busyID)?.owner == owner
        let who = mine ? "job \(JobRecord.wireID(ofKey: busyID)) is" : "another user's job is"
        let fix = mine ? "wait for it or cancel it first" : otherwise
        throw CoreError(.destinationBusy, "\(who) already downloading to \(destination): \(fix)")
    }

    static func idConflict(_ id: String) -> CoreError {
        CoreError(.idConflict, "job id \(id) already names a different request: choose another id, or resubmit exactly the same request")
    }

    /// Cancels a queued or running job and removes its partial file.
    public func cancel(id name: String, caller: UInt32) async throws(CoreError) -> Job {
        var job = try await stopForCancel(name, caller: caller)
        let id = job.id
        job.logAttempt(.cancelled)
        job.state = .cancelled
        job.paused = nil
        job.finishedAt = Date()
        let event = ended(&job)
        journal.write([try jobs.update(job)])
        // The copy goes after the next sync: this one, the outbox's or a subscriber's that
        // replays the end meanwhile.
        abandonUpload(job)
        do {
            try await journal.sync()
        } catch {
            // The job is cancelled here and now; only its record waits (in memory) for space, and
            // an upload's copy waits for that record.
            enqueue(event)
            if let journalError = error as? JournalError, journalError.code == .noSpace {
                throw CoreError(
                    .insufficientSpace,
                    "job \(id) is cancelled, but the state directory's filesystem (\(journal.directory)) has no room to save that yet: "
                        + "it is saved as soon as space is freed there; if transferd restarts before, the job comes back and has to be cancelled again")
            }
            throw Self.notSaved(error, what: "job \(id) is cancelled, but the cancellation")
        }
        releaseSpool(of: job, endIsDurable: true)
        logger(forJob: id).info("job cancelled")
        enqueue(event)
        return view(job)
    }

    /// Stops what a cancel of job `name` must stop first, and returns the job's record as it is
    /// then: a queued job leaves the queue and its timers; a running one's transfer is cancelled.
    /// When its attempt ended just as the cancel came, this waits for that end to arrive, then
    /// looks again at the job as the end left it (waiting to retry, say, or finished).
    private func stopForCancel(_ name: String, caller: UInt32) async throws(CoreError) -> JobRecord {
        while true {
            let job = try visibleJob(name, caller: caller)
            guard !job.state.isTerminal else {
                let when = job.finishedAt.map { " at \(WireCoding.formatTimestamp($0))" } ?? ""
                throw CoreError(.jobFinished, "job \(name) already \(job.state.rawValue)\(when); there is nothing to cancel")
            }
            // From here on, the job's key: the id as the caller wrote it may leave its owner out.
            let id = job.id
            guard job.state == .running else {
                queue.remove(id)
                retryTimers.removeValue(forKey: id)?.cancel()
                startTimers.removeValue(forKey: id)?.cancel()
                engine.forget(jobID: id)
                PartialFile.remove(job.partialPath, roots: roots(for: job))
                return job
            }
            switch engine.cancel(jobID: id) {
            case .cancelled:
                running[id]?.stopping = .cancel
                return job
            case .landing:
                throw CoreError(.jobFinished, "job \(name) has finished downloading and is being moved into place; it can no longer be cancelled")
            case .notRunning:
                guard running[id] != nil else {
                    throw CoreError(.shuttingDown, "transferd is stopping; job \(name) resumes after the restart and can be cancelled then")
                }
                await withCheckedContinuation { running[id]?.endWaiters.append($0) }
            }
        }
    }

    /// Returns once everything acknowledged so far is durable.
    func sync() async throws(CoreError) {
        do {
            try await journal.sync()
        } catch {
            throw CoreError(.internalFailure, "the journal could not be synced (\(error))")
        }
    }
}
