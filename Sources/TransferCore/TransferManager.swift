public import Foundation
public import Logging
import Metrics
public import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The core: owns the jobs, writes every change to the journal first, schedules transfers in
/// submission order, and turns the engine's reports into job states. It never touches the socket.
public actor TransferManager {
    let journal: Journal
    let engine: any TransferDriving
    let logger: Logger
    var configuration: CoreConfiguration
    var jobs: [String: JobRecord] = [:]
    /// Queued job ids in the order they start.
    private var queue: [String] = []
    var running: Set<String> = []
    /// Per running job, the partial file's generation its last `responded` report described.
    private var generations: [String: Int] = [:]
    /// Per waiting job, the task that queues it again when its next attempt is due.
    private var retryTimers: [String: Task<Void, Never>] = [:]
    private var nextOrder: UInt64 = 1
    private var acceptingWork = true
    /// Set once `run()` has applied every engine report (after shutdown ends the stream).
    private var eventsDrained = false
    private var drainWaiters: [CheckedContinuation<Void, Never>] = []
    private let encoder = WireCoding.encoder()

    /// Where job events go out to subscribers.
    public nonisolated let hub = EventHub()
    /// The last event sequence number assigned, and how far the journal has reserved numbers:
    /// after a crash, numbering continues above the reservation, so it never goes back.
    var lastSeq: UInt64 = 0
    var reservedSeq: UInt64 = 0
    /// The sequence number of each job's latest event, for the replay of a job's current state.
    var latestSeq: [String: UInt64] = [:]
    /// Events on their way to the hub, in sequence order (see `drainOutbox`).
    var outbox: [JobEvent] = []
    var outboxDraining = false
    /// Per running job, the bytes its last progress event showed.
    var progressShown: [String: Int64] = [:]
    var nextSubscriptionID = 1
    /// Which finished jobs a configured hook runs for (decided when the job ends).
    let hookSelector: (@Sendable (Job) -> Bool)?
    let metrics = TransferMetrics()
    /// Per running job, the offset up to which its received bytes are counted in the metrics.
    private var countedBytes: [String: Int64] = [:]

    /// The journal key holding the reserved sequence numbers.
    static let sequenceKey = "meta/event-seq"
    /// Sequence numbers reserved at a time.
    static let sequenceBlock: UInt64 = 1 << 20

    /// Replays the jobs in `journal`. Jobs that were running when the daemon stopped are queued
    /// again, ahead of the others, and resume from their last checkpoint.
    public init(
        journal: Journal, engine: any TransferDriving, configuration: CoreConfiguration, logger: Logger,
        hookSelector: (@Sendable (Job) -> Bool)? = nil
    ) throws {
        self.journal = journal
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
        self.hookSelector = hookSelector
        let decoder = WireCoding.decoder()
        let values = journal.values
        if let value = values[Self.sequenceKey] {
            // Numbers that high are damage (they would overflow long before they were used up).
            guard let reserved = try? decoder.decode(UInt64.self, from: Data(value)), reserved < 1 << 62 else {
                throw JournalError(
                    code: .corrupt,
                    message: "the journal \(journal.path) holds an unreadable \(Self.sequenceKey) record; move the journal aside")
            }
            lastSeq = reserved
        }
        var recovered: [JobRecord] = []
        for (key, value) in values where key.hasPrefix("job/") {
            do {
                recovered.append(try decoder.decode(JobRecord.self, from: Data(value)))
            } catch {
                throw JournalError(
                    code: .corrupt,
                    message: "the journal \(journal.path) holds a record for \(key) that this version cannot read (\(error)); "
                        + "run the transferd version that wrote it, or move the journal aside")
            }
        }
        recovered.sort { $0.order < $1.order }
        lastSeq = max(lastSeq, recovered.compactMap(\.eventSeq).filter { $0 < 1 << 62 }.max() ?? 0)
        reservedSeq = lastSeq + Self.sequenceBlock
        journal.write([Self.reservation(reservedSeq)])
        var requeued: [JobRecord] = []
        var refused: Set<String> = []
        for var job in recovered {
            if !job.state.isTerminal, let problem = SubmitValidator.replayProblem(job) {
                refused.insert(job.id)
                // Never start what submit would have refused: a value out of range could trap on its
                // way to libcurl and take the daemon down again on every start.
                job.state = .failed
                job.finishedAt = Date()
                job.nextAttemptAt = nil
                job.error = JobError(
                    code: "invalid_job",
                    message: "the journal holds a value this version refuses (\(problem)); the job was failed instead of started: submit it again")
                lastSeq += 1
                _ = job.numberEnd(lastSeq, hookSelector: hookSelector)
                if let value = try? encoder.encode(job) { journal.write([.put(key: job.journalKey, value: Array(value))]) }
                PartialFile.remove(job.partialPath, roots: configuration.allowedRoots)
                logger.error("journaled job refused at start-up", metadata: ["job": "\(job.id)", "error": "\(problem)"])
            } else if job.state == .running, let size = Self.landedSize(job) {
                // The file reached its destination, but the daemon died before journaling it.
                job.state = .completed
                job.finishedAt = Date()
                job.checkpointBytes = size
                job.totalBytes = size
                // Numbered below the reservation just written; published to nobody, as nobody has subscribed yet.
                lastSeq += 1
                _ = job.numberEnd(lastSeq, hookSelector: hookSelector)
                // Not written here, the check holds again on the next start if this one is lost.
                if let value = try? encoder.encode(job) { journal.write([.put(key: job.journalKey, value: Array(value))]) }
                Self.logger(logger, forJob: job.id).info("job had landed before the restart", metadata: ["bytes": "\(size)", "destination": "\(job.destination)"])
            } else if job.state == .running {
                job.state = .queued
                requeued.append(job)
                Self.logger(logger, forJob: job.id).info(
                    "transfer interrupted by the restart; it resumes from its last checkpoint", metadata: ["bytes": "\(job.checkpointBytes)"])
            }
            jobs[job.id] = job
            if let seq = job.eventSeq { latestSeq[job.id] = seq }
            nextOrder = max(nextOrder, job.order + 1)
        }
        queue = requeued.map(\.id) + recovered.filter { $0.state == .queued && !refused.contains($0.id) }.map(\.id)
        if !requeued.isEmpty {
            logger.info("resuming interrupted transfers", metadata: ["count": "\(requeued.count)"])
        }
    }

    /// The size of a job's file when it is at its destination already, else nil: the destination
    /// is the partial file itself (same inode, which only a finished, synced download gets linked
    /// or renamed to). A partial name still linked to it (a crash between link and unlink) is removed.
    static func landedSize(_ job: JobRecord) -> Int64? {
        guard let inode = job.partialInode else { return nil }
        var destination = stat()
        guard lstat(job.destination, &destination) == 0, (destination.st_mode & S_IFMT) == S_IFREG,
            UInt64(destination.st_ino) == inode
        else { return nil }
        let size = Int64(destination.st_size)
        if let total = job.totalBytes, size != total { return nil }
        var partial = stat()
        if lstat(job.partialPath, &partial) == 0 {
            guard UInt64(partial.st_ino) == inode else { return nil }
            unlink(job.partialPath)
        }
        return size
    }

    // MARK: - Requests

    /// Accepts a download for `owner` (uid), whose process ran with `group` (gid) when known;
    /// returns once its record is on disk.
    public func submit(_ params: Submit.Params, owner: UInt32, group: UInt32? = nil) async throws(RPCError) -> Job {
        guard let result = await submit([params], owner: owner, group: group).first else {
            throw RPCError(.internalError, "the submit produced no answer")
        }
        return try result.get()
    }

    /// Accepts several downloads for `owner` in one durable step: the records of every accepted
    /// job are written together and synced once (one group commit). Returns each submit's job or
    /// why it was refused, in order; a refused submit does not stop the others.
    public func submit(_ batch: [Submit.Params], owner: UInt32, group: UInt32? = nil) async -> [Result<Job, RPCError>] {
        let startedAt = MonotonicClock.nanoseconds()
        defer { metrics.submitDuration.recordNanoseconds(MonotonicClock.nanoseconds() &- startedAt) }
        var results = [Result<Job, RPCError>](repeating: .failure(RPCError(.internalError, "not submitted")), count: batch.count)
        // The host checks may resolve names: all done before the checks below, which run without
        // a suspension point, so that nothing changes between them and the jobs' insertion.
        var urls: [URL?] = []
        for (index, params) in batch.enumerated() {
            do {
                let url = try SubmitValidator.validateURL(params.url)
                try await engine.hosts.admit(url)
                urls.append(url)
            } catch {
                results[index] = .failure(error)
                urls.append(nil)
            }
        }
        var accepted: [(index: Int, job: JobRecord, url: URL)] = []
        var answersExisting = false
        // One pass over the unfinished jobs for the whole batch: the owner's count, and who writes where.
        var unfinished = 0
        var busy: [String: String] = [:]
        for other in jobs.values where !other.state.isTerminal {
            if other.owner == owner { unfinished += 1 }
            busy[other.destination] = other.id
        }
        for (index, params) in batch.enumerated() {
            guard let url = urls[index] else { continue }
            do {
                switch try admit(params, url: url, owner: owner, group: group, unfinished: unfinished, busy: busy) {
                case .existing(let job):
                    answersExisting = true
                    results[index] = .success(view(job))
                case .new(let job, let url):
                    jobs[job.id] = job
                    unfinished += 1
                    busy[job.destination] = job.id
                    accepted.append((index, job, url))
                }
            } catch {
                results[index] = .failure(error)
            }
        }
        var changes: [Journal.Change] = []
        var encoded: [(index: Int, job: JobRecord, url: URL)] = []
        for (index, job, url) in accepted {
            do {
                changes.append(.put(key: job.journalKey, value: try encode(job)))
                encoded.append((index, job, url))
            } catch {
                jobs[job.id] = nil
                results[index] = .failure(RPCError(.internalError, "the job could not be encoded (\(error)); it was not accepted"))
            }
        }
        accepted = encoded
        if !changes.isEmpty || answersExisting {
            // A job answered as existing may still be syncing from its first submit: this waits for that too.
            do {
                try await journal.commit(changes)
            } catch {
                for (index, job, _) in accepted { jobs[job.id] = nil; results[index] = .failure(Self.notWritten(error)) }
                for index in results.indices { if case .success = results[index] { results[index] = .failure(Self.notWritten(error)) } }
                return results
            }
        }
        for (index, job, url) in accepted {
            logger(forJob: job.id).info("job accepted", metadata: ["url": "\(Redaction.url(url))", "destination": "\(job.destination)"])
            // A cancel may have arrived while the record was syncing.
            if let current = jobs[job.id], current.state == .queued {
                emit(.queued, current)
                queue.append(job.id)
            }
            results[index] = .success(view(jobs[job.id] ?? job))
        }
        schedule()
        return results
    }

    private static func notWritten(_ error: any Error) -> RPCError {
        RPCError(.internalError, "the job could not be written to the journal (\(error)); it was not accepted")
    }

    /// What checking one submit found: a job submitted before under the same id, or a new record.
    private enum Admission {
        case existing(JobRecord)
        case new(JobRecord, URL)
    }

    /// Checks one submit (whose `url` passed the host rules) against the rules, the owner's limit (`unfinished` jobs so far) and the
    /// destinations already being written (`busy`), creating the destination's directories when
    /// asked; returns the record to write, or the existing job its id names.
    private func admit(
        _ params: Submit.Params, url: URL, owner: UInt32, group: UInt32?, unfinished: Int, busy: [String: String]
    ) throws(RPCError) -> Admission {
        guard acceptingWork else { throw RPCError(.shuttingDown, "transferd is stopping and accepts no new jobs; submit again once it has restarted") }
        if let id = params.id {
            try SubmitValidator.validateID(id)
            if let existing = jobs[id] {
                guard existing.idChosenByClient, existing.owner == owner, existing.matches(params) else {
                    throw RPCError(.idConflict, "job id \(id) already names a different request: choose another id, or resubmit exactly the same request")
                }
                return .existing(existing)
            }
        }
        try SubmitValidator.validateHeaders(params.headers ?? [:])
        let overwrite = params.overwrite ?? false
        let sha256 = try SubmitValidator.validateSHA256(params.sha256)
        if let session = params.session { try SubmitValidator.validateSession(session) }
        try SubmitValidator.validateRetryLimits(params.retry)
        try SubmitValidator.validateSize(params.size)
        let downloadOwner = DownloadOwner(uid: owner, gid: group)
        if params.createDirectories == true {
            try DirectoryCreator.createDirectories(of: params.destination, roots: configuration.allowedRoots, owner: downloadOwner)
        }
        try SubmitValidator.validateDestination(params.destination, overwrite: overwrite, roots: configuration.allowedRoots, owner: downloadOwner)
        if let size = params.size {
            try SubmitValidator.validateSpace(for: size, destination: params.destination, reserve: configuration.diskReserveBytes)
        }
        guard unfinished < configuration.maxJobsPerUser else {
            throw RPCError(
                .limitExceeded,
                "you already have \(unfinished) unfinished jobs, the most one user may have (max_jobs_per_user): "
                    + "wait for some to finish or cancel some, or ask the administrator to raise the limit")
        }
        if let busyID = busy[params.destination] {
            // Another user's job is never named: its id would let the caller follow someone else's work.
            let mine = jobs[busyID]?.owner == owner
            let who = mine ? "job \(busyID) is" : "another user's job is"
            let fix = mine ? "wait for it or cancel it first" : "choose another destination"
            throw RPCError(.destinationBusy, "\(who) already downloading to \(params.destination): \(fix)")
        }
        let id = params.id ?? newJobID()
        let job = JobRecord(
            id: id, order: nextOrder, state: .queued, url: params.url, destination: params.destination,
            headers: params.headers ?? [:], overwrite: overwrite, owner: owner, ownerGroup: group, idChosenByClient: params.id != nil,
            createdAt: Date(), attempts: 0, checkpointBytes: 0, expectedSha256: sha256, expectedSize: params.size,
            retry: params.retry?.isEmpty == false ? params.retry : nil, session: params.session)
        nextOrder += 1
        return .new(job, url)
    }

    /// One job, or the caller's jobs in submission order, optionally filtered by state. Root
    /// (uid 0) may see any job by id, and every user's jobs in the list with `all`.
    public func status(id: String?, states: [JobState]?, caller: UInt32, all: Bool = false) throws(RPCError) -> [Job] {
        if let id {
            return [view(try visibleJob(id, caller: caller))]
        }
        guard !all || caller == 0 else {
            throw RPCError(.notPermitted, "only root may list every user's jobs: leave out all (transferctl status --all) to list yours")
        }
        let wanted = states.map(Set.init)
        return jobs.values
            .filter { all || $0.owner == caller }
            .filter { wanted?.contains($0.state) ?? true }
            .sorted { $0.order < $1.order }
            .map(view)
    }

    /// Cancels a queued or running job and removes its partial file.
    public func cancel(id: String, caller: UInt32) async throws(RPCError) -> Job {
        var job = try visibleJob(id, caller: caller)
        guard !job.state.isTerminal else {
            let when = job.finishedAt.map { " at \(WireCoding.formatTimestamp($0))" } ?? ""
            throw RPCError(.jobFinished, "job \(id) already \(job.state.rawValue)\(when); there is nothing to cancel")
        }
        if job.state == .running {
            switch engine.cancel(jobID: id) {
            case .cancelled:
                break
            case .landing:
                throw RPCError(.jobFinished, "job \(id) has finished downloading and is being moved into place; it can no longer be cancelled")
            case .notRunning:
                throw RPCError(.jobFinished, "job \(id) has just ended; see transferctl status \(id) for how")
            }
        } else {
            queue.removeAll { $0 == id }
            retryTimers.removeValue(forKey: id)?.cancel()
            engine.forget(jobID: id)
            PartialFile.remove(job.partialPath, roots: configuration.allowedRoots)
        }
        job.state = .cancelled
        job.finishedAt = Date()
        let event = ended(&job)
        jobs[id] = job
        do {
            try await journal.commit([.put(key: job.journalKey, value: try encode(job))])
        } catch {
            throw RPCError(.internalError, "the cancellation could not be written to the journal (\(error))")
        }
        logger(forJob: id).info("job cancelled")
        enqueue(event)
        return view(job)
    }

    /// Returns once everything acknowledged so far is durable.
    func sync() async throws(RPCError) {
        do {
            try await journal.sync()
        } catch {
            throw RPCError(.internalError, "the journal could not be synced (\(error))")
        }
    }

    // MARK: - Engine reports

    /// Applies the engine's reports until its stream ends.
    public func run() async {
        for await event in engine.events {
            handle(event)
        }
        eventsDrained = true
        drainWaiters.forEach { $0.resume() }
        drainWaiters = []
    }

    func handle(_ event: EngineEvent) {
        guard var job = jobs[event.jobID] else { return }
        switch event {
        case .responded(_, let total, let validator, let startOffset, let inode, let generation, let finalURL):
            guard job.state == .running else { return }
            generations[job.id] = generation
            job.totalBytes = total
            job.validator = validator
            job.partialInode = inode
            job.finalURL = finalURL
            if startOffset < job.checkpointBytes { job.checkpointBytes = startOffset }
            // Bytes before the offset were counted, or were there before this attempt.
            countedBytes[job.id] = startOffset
            save(job)
            if startOffset > 0 {
                logger(forJob: job.id).info("transfer resumed", metadata: ["bytes": "\(startOffset)", "attempt": "\(job.attempts)"])
            }
        case .checkpoint(_, let bytes, let generation):
            // A sync that began before the file was cut back to 0 does not describe it any more.
            guard job.state == .running, generation == generations[job.id] else { return }
            countReceived(job.id, upTo: bytes)
            job.checkpointBytes = bytes
            save(job)
            logger(forJob: job.id).debug("checkpoint", metadata: ["bytes": "\(bytes)"])
        case .completed(_, let bytes, let sha256):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            countReceived(job.id, upTo: bytes)
            metrics.transfersCompleted.increment()
            job.state = .completed
            job.finishedAt = Date()
            job.checkpointBytes = bytes
            job.totalBytes = bytes
            job.sha256 = sha256
            job.error = nil
            let event = ended(&job)
            save(job)
            enqueue(event)
            logger(forJob: job.id).info("job completed: the file landed", metadata: ["destination": "\(job.destination)", "bytes": "\(bytes)", "sha256": "\(sha256)"])
        case .failed(_, let error):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            markFailed(job, error)
        case .interrupted(_, let error, let kept, let retryAfter):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            countReceived(job.id, upTo: kept.bytes)
            job.checkpointBytes = kept.bytes
            job.validator = kept.validator
            job.totalBytes = kept.totalBytes
            retryOrFail(job, error: error, retryAfter: retryAfter)
        case .stopped(_, let bytes):
            defer { transferEnded(job.id) }
            // Stopped for shutdown: it stays running in the journal and resumes on restart.
            // (A cancelled job's record was written by `cancel`.)
            guard job.state == .running else { return }
            countReceived(job.id, upTo: bytes)
            job.checkpointBytes = bytes
            save(job)
            logger(forJob: job.id).info("transfer stopped; it resumes after the restart", metadata: ["bytes": "\(bytes)"])
        }
    }

    static let progressThatResetsFailures: Int64 = 1 << 20
    /// The longest wait before a retry, whatever the server asks for.
    static let longestRetryWait: Double = 7 * 86_400

    /// After a failed attempt: waits and retries when the job's limits allow, else fails it.
    private func retryOrFail(_ record: JobRecord, error: JobError, retryAfter: Double?) {
        var job = record
        let limits = configuration.retry.limits(for: job.retry)
        // Only real progress (a MiB past the furthest point any attempt reached) starts the count
        // again: a trickle or a server that keeps dropping at the same place still runs out of attempts.
        if job.checkpointBytes >= (job.furthestBytes ?? 0) + Self.progressThatResetsFailures {
            job.furthestBytes = job.checkpointBytes
            job.failuresInARow = 1
        } else {
            job.failuresInARow = (job.failuresInARow ?? 0) + 1
        }
        let failures = job.failuresInARow ?? 1
        let now = Date()
        // A server's Retry-After is honoured up to a week; a larger one is not a plan, and the job's
        // maximum time ends it sooner anyway.
        let wait = min(retryAfter ?? configuration.retry.backoff(afterFailures: failures), Self.longestRetryWait)
        let next = now.addingTimeInterval(max(0, wait))
        let deadline = job.createdAt.addingTimeInterval(limits.maxTime)
        var giveUp: String?
        if failures >= limits.maxAttempts {
            giveUp = "gave up after \(failures) failed attempt\(failures == 1 ? "" : "s") in a row (max_attempts \(limits.maxAttempts))"
        } else if next > deadline {
            giveUp = "gave up: the next attempt would start after the job's maximum time (max_time_seconds) ends at \(WireCoding.formatTimestamp(deadline))"
        }
        if let giveUp {
            // The engine kept the partial file for a retry that will not come.
            PartialFile.remove(job.partialPath, roots: configuration.allowedRoots)
            engine.forget(jobID: job.id)
            markFailed(job, JobError(code: error.code, message: "\(giveUp); the last attempt failed: \(error.message)", httpStatus: error.httpStatus))
            return
        }
        job.state = .waiting
        job.error = error
        job.nextAttemptAt = next
        save(job)
        metrics.retries.increment()
        emit(.waiting, job)
        logger(forJob: job.id).info(
            "job waits to retry",
            metadata: ["attempt": "\(job.attempts)", "retry_at": "\(WireCoding.formatTimestamp(next))", "error": "\(error.message)"])
        armRetry(job.id, at: next)
    }

    /// Records that a job failed for good.
    private func markFailed(_ record: JobRecord, _ error: JobError) {
        var job = record
        job.state = .failed
        job.finishedAt = Date()
        job.error = error
        job.nextAttemptAt = nil
        let event = ended(&job)
        save(job)
        enqueue(event)
        metrics.failed(code: error.code)
        logger(forJob: job.id).warning("job failed", metadata: ["attempt": "\(job.attempts)", "error": "\(error.message)"])
    }

    /// Queues a waiting job again once `date` has come.
    private func armRetry(_ id: String, at date: Date) {
        retryTimers[id]?.cancel()
        retryTimers[id] = Task { [weak self] in
            // Bounded, so that no stored time converts into an overflow.
            let delay = min(date.timeIntervalSinceNow, Self.longestRetryWait * 2)
            if delay > 0 {
                do { try await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 1)) } catch { return }
            }
            await self?.retryDue(id)
        }
    }

    private func retryDue(_ id: String) {
        retryTimers[id] = nil
        guard var job = jobs[id], job.state == .waiting else { return }
        job.state = .queued
        job.nextAttemptAt = nil
        save(job)
        emit(.queued, job)
        logger(forJob: id).info("retrying", metadata: ["attempt": "\(job.attempts + 1)", "bytes": "\(job.checkpointBytes)"])
        // Back in its place by submission order, ahead of jobs submitted after it.
        let position = queue.firstIndex { (jobs[$0]?.order ?? 0) > job.order } ?? queue.endIndex
        queue.insert(id, at: position)
        schedule()
    }

    /// Frees the transfer's slot and starts the next queued job (after the ended job's record
    /// is written: callers defer it).
    private func transferEnded(_ id: String) {
        running.remove(id)
        generations[id] = nil
        countedBytes[id] = nil
        progressShown[id] = nil
        schedule()
    }

    // MARK: - Scheduling

    private func schedule() {
        while acceptingWork, running.count < configuration.maxConcurrentTransfers, !queue.isEmpty {
            let id = queue.removeFirst()
            guard var job = jobs[id], job.state == .queued, let url = URL(string: job.url) else { continue }
            job.state = .running
            job.startedAt = job.startedAt ?? Date()
            job.attempts += 1
            save(job)
            emit(.started, job)
            metrics.transfersStarted.increment()
            countedBytes[id] = job.checkpointBytes
            running.insert(id)
            generations[id] = 0
            let limits = configuration.retry.limits(for: job.retry)
            // Every line the engine logs about this attempt carries the job and the attempt number.
            var transferLogger = logger(forJob: id)
            transferLogger[metadataKey: "attempt"] = "\(job.attempts)"
            transferLogger.info("attempt started", metadata: ["bytes": "\(job.checkpointBytes)"])
            engine.start(
                TransferRequest(
                    jobID: id, url: url, headers: job.headers, destination: job.destination,
                    partialPath: job.partialPath, overwrite: job.overwrite, resumeFrom: job.checkpointBytes,
                    validator: job.validator, totalBytes: job.totalBytes,
                    expectedSha256: job.expectedSha256, expectedSize: job.expectedSize, limits: limits,
                    deadline: job.createdAt.addingTimeInterval(limits.maxTime), diskReserveBytes: configuration.diskReserveBytes,
                    allowedRoots: configuration.allowedRoots, owner: DownloadOwner(uid: job.owner, gid: job.ownerGroup),
                    logger: transferLogger))
        }
    }

    /// Starts queued jobs and the retry timers of waiting ones; call once after the daemon is ready.
    public func start() async {
        // The sequence numbers reserved at start-up are durable before any event uses them.
        try? await journal.sync()
        for job in jobs.values where job.state == .waiting {
            armRetry(job.id, at: job.nextAttemptAt ?? Date())
        }
        schedule()
    }

    /// Stops taking work, stops every transfer with its partial file synced, and records how far
    /// each got, so all of them resume after a restart.
    public func shutdown() async {
        acceptingWork = false
        retryTimers.values.forEach { $0.cancel() }
        retryTimers = [:]
        let kept = await engine.stopAll()
        // Apply what the engine reported before it stopped (a job may have landed meanwhile),
        // then what each stopped transfer had reached.
        engine.finishEvents()
        if !eventsDrained {
            await withCheckedContinuation { drainWaiters.append($0) }
        }
        for (id, stopped) in kept {
            guard var job = jobs[id], job.state == .running else { continue }
            job.checkpointBytes = stopped.bytes
            job.validator = stopped.validator ?? job.validator
            job.totalBytes = stopped.totalBytes ?? job.totalBytes
            save(job)
        }
        try? await journal.sync()
    }

    /// Drops finished jobs older than the retention period.
    public func dropExpired(now: Date = Date()) {
        let retention = Double(configuration.finishedJobRetention.components.seconds)
        let eventRetention = Double(configuration.eventRetention.components.seconds)
        let expired = jobs.values.filter { job in
            guard job.state.isTerminal, let finished = job.finishedAt else { return false }
            let age = now.timeIntervalSince(finished)
            // A session's unacknowledged end (or a hook still due) keeps the job until the event retention ends.
            let awaited = (job.session != nil && job.acknowledged != true) || job.hookPending == true
            return age >= retention && (!awaited || age >= eventRetention)
        }
        guard !expired.isEmpty else { return }
        for job in expired {
            jobs[job.id] = nil
            latestSeq[job.id] = nil
        }
        journal.write(expired.map { .delete(key: $0.journalKey) })
        logger.debug("dropped expired jobs", metadata: ["count": "\(expired.count)"])
    }

    /// Adds the bytes a job received past what was counted so far to the received-bytes counter.
    private func countReceived(_ id: String, upTo bytes: Int64) {
        guard let counted = countedBytes[id], bytes > counted else { return }
        metrics.receivedBytes.increment(by: bytes - counted)
        countedBytes[id] = bytes
    }

    /// Brings the metrics read at a scrape up to date: jobs by state, open subscriptions, and the
    /// bytes running transfers received since their last checkpoint.
    public func refreshMetrics() {
        for id in running {
            if let progress = engine.progress(jobID: id) { countReceived(id, upTo: progress.bytes) }
        }
        var byState: [JobState: Int] = [:]
        for job in jobs.values { byState[job.state, default: 0] += 1 }
        for (state, gauge) in metrics.jobs { gauge.record(byState[state] ?? 0) }
        metrics.subscribers.record(hub.subscriberCount)
    }

    /// Counts for status lines.
    public var counts: JobCounts {
        JobCounts(running: running.count, queued: queue.count, waiting: retryTimers.count, total: jobs.count)
    }

    /// Applies a changed configuration: a higher concurrency starts queued jobs at once, a lower
    /// one lets running transfers finish; a shorter retention applies at the next sweep.
    public func reconfigure(_ configuration: CoreConfiguration) {
        self.configuration = configuration
        schedule()
    }

    /// Summed live rate of the running transfers, in bytes per second.
    public var aggregateRate: Int64 {
        running.reduce(0) { $0 + (engine.progress(jobID: $1)?.bytesPerSecond ?? 0) }
    }

    // MARK: - Helpers

    func visibleJob(_ id: String, caller: UInt32) throws(RPCError) -> JobRecord {
        guard let job = jobs[id], caller == 0 || job.owner == caller else {
            throw RPCError(.noSuchJob, "no such job: \(id.prefix(Limits.maxJobIDLength)) (see transferctl status for your jobs)")
        }
        return job
    }

    /// The logger for lines about one job: its id is metadata (`TRANSFER_JOB_ID=` in the journal).
    nonisolated func logger(forJob id: String) -> Logger {
        Self.logger(logger, forJob: id)
    }

    static func logger(_ base: Logger, forJob id: String) -> Logger {
        var logger = base
        logger[metadataKey: "job"] = "\(id)"
        return logger
    }

    func view(_ job: JobRecord) -> Job {
        guard job.state == .running, let progress = engine.progress(jobID: job.id) else { return job.wireJob() }
        return job.wireJob(liveBytes: progress.bytes, bytesPerSecond: progress.bytesPerSecond)
    }

    func save(_ job: JobRecord) {
        jobs[job.id] = job
        guard let value = try? encode(job) else {
            logger(forJob: job.id).error("cannot encode a job record")
            return
        }
        journal.write([.put(key: job.journalKey, value: value)])
    }

    func encode(_ job: JobRecord) throws -> [UInt8] {
        Array(try encoder.encode(job))
    }

    private func newJobID() -> String {
        while true {
            let id = String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(to: 16)
            if jobs[id] == nil { return id }
        }
    }
}

extension String {
    /// The string with zeros in front, up to `length` characters (hex numbers of fixed width).
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
