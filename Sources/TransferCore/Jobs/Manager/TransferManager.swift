public import Foundation
public import Logging
import Metrics
import CLinuxShims
public import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The core: owns the jobs, writes every change to the journal first, schedules transfers by
/// priority class and queue order within the per-host limit, and turns the engine's reports into job states. It never touches the socket.
public actor TransferManager {
    let journal: Journal
    let engine: any TransferDriving
    let logger: Logger
    var configuration: CoreConfiguration
    var jobs: JobTable
    /// Queued jobs in the order they start: by class, then position (see `JobQueue`).
    var queue = JobQueue()
    /// The running transfers, from their start to the engine's report of their end.
    var running: [String: RunningTransfer] = [:]
    /// Per waiting job, the task that queues it again when its next attempt is due.
    var retryTimers: [String: Task<Void, Never>] = [:]
    /// Per queued job with a start time ahead (`not_before`), the task that queues it then.
    var startTimers: [String: Task<Void, Never>] = [:]
    var nextOrder: UInt64 = 1
    var acceptingWork = true
    /// The daemon-wide hold (root's `pause --all`): no transfer starts while it is on. Journaled
    /// under `holdKey`.
    var held = false
    /// Set once `run()` has applied every engine report (after shutdown ends the stream).
    var eventsDrained = false
    var drainWaiters: [CheckedContinuation<Void, Never>] = []
    let encoder = WireEncoder()

    /// Where job events go out to subscribers.
    public nonisolated let hub = EventHub()
    /// Event numbers and the events on their way to the hub.
    var outbox = EventOutbox(after: 0)
    var nextSubscriptionID = 1
    /// Which finished jobs a configured hook runs for (decided when the job ends).
    let hookSelector: (@Sendable (Job) -> Bool)?
    let metrics = TransferMetrics()
    /// The copies of files to upload; nil where uploads are not offered (tests of downloads).
    public nonisolated let spool: Spool?

    /// The journal key holding the reserved sequence numbers.
    static let sequenceKey = "meta/event-seq"
    /// The journal key present while the daemon-wide hold is on.
    static let holdKey = "meta/hold"

    /// Replays the jobs in `journal`. Jobs that were running when the daemon stopped are queued
    /// again, ahead of the others, and resume from their last checkpoint.
    public init(
        journal: Journal, engine: any TransferDriving, configuration: CoreConfiguration, logger: Logger,
        hookSelector: (@Sendable (Job) -> Bool)? = nil, spool: Spool? = nil
    ) throws {
        self.spool = spool
        self.journal = journal
        self.engine = engine
        self.configuration = configuration
        self.logger = logger
        self.hookSelector = hookSelector
        let decoder = WireCoding.decoder()
        jobs = JobTable { [journal] id in Self.readRecord(id, from: journal) }
        // Finished jobs and queued downloads are read as summaries (JobSummaryScan); only other
        // unfinished ones are decoded.
        var replay = try Self.replay(journal)
        // Taken out, so that sorting them does not copy them.
        var (recovered, light) = (replay.recovered, replay.light)
        (replay.recovered, replay.light) = ([], [])
        let (sequenceRecord, holdRecord, finished, requestSizes) = (replay.sequenceRecord, replay.holdRecord, replay.finished, replay.requestSizes)
        var lastSeq: UInt64 = 0
        // The large fields of unfinished jobs, read once the file is no longer mapped for the scan.
        try Self.attachRequests(to: &recovered, from: journal, decoder: decoder)
        held = holdRecord
        if holdRecord { logger.notice("new transfers are held (transferctl pause --all); transferctl resume --all lifts the hold") }
        if let sequenceRecord {
            // Numbers that high are damage (they would overflow long before they were used up).
            guard let reserved = try? decoder.decode(UInt64.self, from: Data(sequenceRecord)), reserved < 1 << 62 else {
                throw JournalError(
                    code: .corrupt,
                    message: "the journal \(journal.path) holds an unreadable \(Self.sequenceKey) record; move the journal aside")
            }
            lastSeq = reserved
        }
        jobs.reserveFinished(finished.count)
        for (id, var summary) in finished {
            summary.weight = summary.weight &+ UInt32(clamping: requestSizes[id] ?? 0)
            jobs.insertFinished(id, summary, replacing: false)
            nextOrder = max(nextOrder, summary.order + 1)
            if let seq = summary.eventSeq, seq < 1 << 62 { lastSeq = max(lastSeq, seq) }
        }
        recovered.sort { $0.order < $1.order }
        lastSeq = max(lastSeq, recovered.compactMap(\.eventSeq).filter { $0 < 1 << 62 }.max() ?? 0)
        // Light queued jobs go into the queue first, in its order, so that each is appended.
        light.sort { Self.queueKey($0.job) < Self.queueKey($1.job) }
        jobs.reserveQueued(light.count)
        // The queue is filled on another thread while this one fills the table, from the same
        // list: with a million queued jobs, each takes a second or more.
        let queueing = QueueFill(light, capacity: light.count + recovered.count)
        for (id, var job, _) in light {
            job.summary.weight = job.summary.weight &+ UInt32(clamping: requestSizes[id] ?? 0)
            jobs.insertQueued(id, job, replacing: false)
            nextOrder = max(nextOrder, job.summary.order + 1)
            if let seq = job.summary.eventSeq, seq < 1 << 62 { lastSeq = max(lastSeq, seq) }
        }
        var queue = queueing.wait()
        outbox = EventOutbox(after: lastSeq)
        // Written once the spool holds only what unfinished uploads need: start-up frees space
        // before it asks for any (a full disk must not keep the daemon from starting).
        var startupChanges: [Journal.Change] = [Self.reservation(outbox.reservedSeq)]
        let recoveredIDs = Set(recovered.map(\.id))
        startupChanges += Self.orphanedRequests(requestSizes.keys) { [jobs] in jobs.contains($0) || recoveredIDs.contains($0) }
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
                job.error = Self.refusedAtReplay(problem)
                _ = job.numberEnd(outbox.next().seq, hookSelector: hookSelector)
                if let value = try? encoder.bytes(job.stateRecord) { startupChanges.append(.put(key: job.journalKey, value: value)) }
                PartialFile.remove(job.partialPath, roots: configuration.allowedRoots)
                logger.error("journaled job refused at start-up", metadata: ["job": "\(job.id)", "error": "\(problem)"])
            } else if job.state == .running, let size = Self.landedSize(job) {
                // The file reached its destination, but the daemon died before journaling it.
                job.state = .completed
                job.finishedAt = Date()
                job.checkpointBytes = size
                job.totalBytes = size
                // Numbered below the reservation just written; published to nobody, as nobody has subscribed yet.
                _ = job.numberEnd(outbox.next().seq, hookSelector: hookSelector)
                // Not written here, the check holds again on the next start if this one is lost.
                if let value = try? encoder.bytes(job.stateRecord) { startupChanges.append(.put(key: job.journalKey, value: value)) }
                Self.logger(logger, forJob: job.id).info("job had landed before the restart", metadata: ["bytes": "\(size)", "destination": "\(job.destination)"])
            } else if job.state == .running, job.paused == true {
                // Paused while its transfer was stopping: it stays paused, from its last checkpoint.
                job.state = .queued
            } else if job.state == .running {
                job.state = .queued
                requeued.append(job)
                Self.logger(logger, forJob: job.id).info(
                    "transfer interrupted by the restart; it resumes from its last checkpoint", metadata: ["bytes": "\(job.checkpointBytes)"])
            }
            jobs[job.id] = job
            nextOrder = max(nextOrder, job.order + 1)
        }
        Self.recoverSpool(spool, jobs: Array(jobs.wholeUnfinishedJobs), logger: logger)
        // The reservation as numbering the jobs ended at start-up left it.
        startupChanges[0] = Self.reservation(outbox.reservedSeq)
        journal.write(startupChanges)
        // A job whose start time is still ahead waits outside the queue (start() arms its timer).
        let now = Date()
        for job in requeued { queue.insert(job.id, key: Self.queueKey(job, lane: 0), host: job.hostKey) }
        for job in recovered
        where job.state == .queued && job.paused != true && !refused.contains(job.id) && !(job.notBefore.map { $0 > now } ?? false) {
            // A background job that yielded its slot keeps its place at the front of its class.
            queue.insert(job.id, key: Self.queueKey(job, lane: job.yielded == true ? 0 : 1), host: job.hostKey)
        }
        self.queue = queue
        if !requeued.isEmpty {
            logger.info("resuming interrupted transfers", metadata: ["count": "\(requeued.count)"])
        }
        // What the replay built and dropped (lists of records, decoders' buffers) goes back to the system.
        if finished.count + recovered.count > 10_000 { _ = clinuxshims_malloc_trim(0) }
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

    /// Starts queued jobs and the retry timers of waiting ones; call once after the daemon is ready.
    public func start() async {
        // The sequence numbers reserved at start-up are durable before any event uses them.
        try? await journal.sync()
        for job in jobs.wholeUnfinishedJobs where job.state == .waiting {
            armRetry(job.id, at: job.nextAttemptAt ?? Date())
        }
        // Jobs whose start time was still ahead at replay wait for it outside the queue (never light ones).
        for job in jobs.wholeUnfinishedJobs where job.state == .queued && job.paused != true && !queue.contains(job.id) {
            if let notBefore = job.notBefore { armStart(job.id, at: notBefore) }
        }
        schedule()
    }

    /// Stops taking work, stops every transfer with its partial file synced, and records how far
    /// each got, so all of them resume after a restart.
    public func shutdown() async {
        acceptingWork = false
        retryTimers.values.forEach { $0.cancel() }
        retryTimers = [:]
        startTimers.values.forEach { $0.cancel() }
        startTimers = [:]
        for id in running.keys where running[id]?.stopping == nil { running[id]?.stopping = .shutdown }
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
            job.parts = stopped.parts.isEmpty ? nil : stopped.parts
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
        let now = now.timeIntervalSince1970
        let expired = jobs.finishedJobs.compactMap { id, job -> String? in
            guard let finished = job.finishedAt else { return nil }
            let age = now - finished
            // A session's unacknowledged end (or a hook still due) keeps the job until the event retention ends.
            let awaited = (job.session != nil && !job.acknowledged) || job.hookPending
            return age >= retention && (!awaited || age >= eventRetention) ? id : nil
        }
        guard !expired.isEmpty else { return }
        // A failed download's kept partial file and an inbox download's file go with it.
        forget(ids: expired)
        journal.write(expired.flatMap(Self.deletions(of:)))
        logger.debug("dropped expired jobs", metadata: ["count": "\(expired.count)"])
    }

    /// Adds the bytes a job received past what was counted so far to the received-bytes counter.
    func countReceived(_ id: String, upTo bytes: Int64) {
        guard let counted = running[id]?.countedBytes, bytes > counted else { return }
        metrics.receivedBytes.increment(by: bytes - counted)
        running[id]?.countedBytes = bytes
    }

    /// Brings the metrics read at a scrape up to date: jobs by state, open subscriptions, and the
    /// bytes running transfers received since their last checkpoint.
    public func refreshMetrics() {
        for id in running.keys {
            if let progress = engine.progress(jobID: id) { countReceived(id, upTo: progress.bytes) }
        }
        var byState: [JobState: Int] = [:]
        jobs.forEachSummary { _, job in byState[job.state, default: 0] += 1 }
        for (state, gauge) in metrics.jobs { gauge.record(byState[state] ?? 0) }
        metrics.subscribers.record(hub.subscriberCount)
    }

    /// Counts for status lines.
    public var counts: JobCounts {
        JobCounts(
            running: running.count, queued: queue.count, waiting: retryTimers.count, total: jobs.count,
            paused: jobs.pausedCount, held: held)
    }

    /// Applies a changed configuration: a higher concurrency (or per-host limit) starts queued jobs
    /// at once, a lower one lets running transfers finish; a shorter retention applies at the next sweep.
    public func reconfigure(_ configuration: CoreConfiguration) {
        self.configuration = configuration.keepingInbox(of: self.configuration)
        schedule()
    }

    /// Summed live rate of the running transfers, in bytes per second.
    public var aggregateRate: Int64 {
        running.keys.reduce(0) { $0 + (engine.progress(jobID: $1)?.bytesPerSecond ?? 0) }
    }

    // MARK: - Helpers

    func visibleJob(_ id: String, caller: UInt32) throws(CoreError) -> JobRecord {
        guard let key = jobKey(id, caller: caller), let job = jobs[key], caller == 0 || job.owner == caller else {
            if let ambiguity = ambiguity(id, caller: caller) { throw ambiguity }
            throw CoreError(.noSuchJob, "no such job: \(id.prefix(Limits.maxJobIDLength)) (see transferctl status for your jobs)")
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
        return job.wireJob(liveBytes: progress.bytes, bytesPerSecond: progress.bytesPerSecond).withPacing(progress)
    }

    /// Writes `job`'s record without waiting for the disk; `promptly` as `Journal.write` says.
    func save(_ job: JobRecord, promptly: Bool = false) {
        do {
            journal.write([try jobs.update(job)], promptly: promptly)
        } catch {
            // Kept in memory as it is now, so the job goes on; its next change is written.
            jobs[job.id] = job
            logger(forJob: job.id).error("cannot encode a job record", metadata: ["error": "\(error)"])
        }
    }

    /// Writes `changes` and returns once they are on disk. They are queued before the first
    /// suspension, so a finished job's record can be read back from the journal at once.
    func commit(_ changes: [Journal.Change]) async throws {
        journal.write(changes)
        try await journal.sync()
    }

    func encode(_ job: JobRecord) throws -> [UInt8] {
        try encoder.bytes(job.stateRecord)
    }

    /// A new job id: 15 hex digits (60 random bits). Swift keeps a string of 15 bytes or fewer
    /// inline, so the job table, the queue and the journal's index hold a generated id without a
    /// heap allocation of its own.
    func newJobID() -> String {
        while true {
            let id = String(UInt64.random(in: 0..<(1 << 60)), radix: 16).leftPadded(to: 15)
            if !jobs.contains(id) { return id }
        }
    }
}

extension String {
    /// The string with zeros in front, up to `length` characters (hex numbers of fixed width).
    func leftPadded(to length: Int) -> String {
        count >= length ? self : String(repeating: "0", count: length - count) + self
    }
}
