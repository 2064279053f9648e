import Foundation
import Logging
import Metrics
import TransferProtocol

/// Starting queued jobs and stopping background transfers as the `Scheduler` decides.
///
/// A background transfer that yields is stopped by the engine as a pause stops it (partial file
/// synced, the bytes kept), and queued again at the front of its class, to continue from that
/// byte with a ranged request.
extension TransferManager {
    /// Starts queued jobs while slots are free, then lets background transfers yield to jobs still waiting.
    func schedule() {
        while acceptingWork, !held, running.count < configuration.maxConcurrentTransfers, let id = nextToStart() {
            // A queued job replayed light has its record read only now: what start-up checks of the
            // others (`SubmitValidator.replayProblem`) is checked here; submit checked the rest.
            let wasLight = jobs.isLight(id)
            guard var job = jobs[id], job.state == .queued, job.paused != true else { continue }
            if wasLight, let problem = SubmitValidator.replayProblem(job) {
                markFailed(job, Self.refusedAtReplay(problem))
                continue
            }
            guard let url = URL(string: job.url) else { continue }
            if let deadline = job.deadline, deadline <= Date() {
                markFailed(
                    job, JobError(code: .timeLimit, message: "the job's deadline (\(WireCoding.formatTimestamp(deadline))) passed before it could start"))
                continue
            }
            job.state = .running
            job.yielded = nil
            job.startedAt = job.startedAt ?? Date()
            job.attempts += 1
            job.attemptStartedAt = Date()
            save(job)
            emit(.started, job)
            metrics.transfersStarted.increment()
            // Bytes an upload sends are not bytes received.
            running[id] = RunningTransfer(host: job.hostKey, countedBytes: job.isUpload ? nil : job.checkpointBytes)
            engine.start(transferRequest(for: job, url: url))
        }
        yieldSlotsToWaitingJobs()
    }

    /// The error of a journaled job holding a value submit would have refused.
    static func refusedAtReplay(_ problem: String) -> JobError {
        JobError(
            code: .invalidJob,
            message: "the journal holds a value this version refuses (\(problem)); the job was failed instead of started: submit it again")
    }

    /// What the engine is handed for one attempt of `job`.
    private func transferRequest(for job: JobRecord, url: URL) -> TransferRequest {
        let id = job.id
        let limits = configuration.retry.limits(for: job.retry)
        // Every line the engine logs about this attempt carries the job and the attempt number.
        var transferLogger = logger(forJob: id)
        transferLogger[metadataKey: "attempt"] = "\(job.attempts)"
        transferLogger.info("attempt started", metadata: ["bytes": "\(job.checkpointBytes)"])
        var request = TransferRequest(
            jobID: id, url: url, headers: job.headers, destination: job.destination,
            partialPath: job.partialPath, overwrite: job.overwrite, resumeFrom: job.checkpointBytes,
            validator: job.validator, totalBytes: job.totalBytes,
            expectedSha256: job.expectedSha256, expectedSize: job.expectedSize, limits: limits,
            deadline: job.endOfTime(maxTime: limits.maxTime), diskReserveBytes: configuration.diskReserveBytes,
            // An inbox download lands in the daemon's own directory: no submitter's rights to check.
            allowedRoots: roots(for: job), owner: job.inbox == true ? nil : DownloadOwner(uid: job.owner, gid: job.ownerGroup),
            logger: transferLogger)
        if job.isUpload { request.kind = .upload(uploadPlan(for: job)) }
        request.limitRate = job.limitRate
        request.segments = job.segments ?? configuration.segments
        request.cacert = job.cacert
        request.conditional = job.conditional == true
        request.parts = job.parts ?? []
        request.bandwidthClass = job.bandwidthClass
        return request
    }

    /// The key `job` is queued under; `lane` 0 puts it ahead of the rest of its class.
    static func queueKey(_ job: JobRecord, lane: Int = 1) -> QueueKey {
        QueueKey(rank: job.priorityClass.rank, lane: lane, position: job.queuePosition, order: job.order)
    }

    /// The key a light queued job (`QueuedJob`) is queued under: as its record's.
    static func queueKey(_ job: QueuedJob) -> QueueKey {
        QueueKey(rank: job.priority.rank, lane: 1, position: job.queuePosition, order: job.summary.order)
    }

    /// Queues `job` in its place (or moves it there when queued already).
    func queueJob(_ job: JobRecord, lane: Int = 1) {
        queue.insert(job.id, key: Self.queueKey(job, lane: lane), host: job.hostKey)
    }

    /// The scheduling limits of the configuration now.
    var scheduler: Scheduler {
        Scheduler(maxConcurrent: configuration.maxConcurrentTransfers, maxPerHost: configuration.maxConnectionsPerHost)
    }

    /// Whether a queued entry may start: its job is still queued and not paused.
    func isStartable(_ id: String) -> Bool {
        jobs.isStartable(id)
    }

    /// The running transfers as the scheduler sees them.
    func slots() -> [Scheduler.Slot] {
        running.map { id, transfer in
            let job = jobs[id]
            return Scheduler.Slot(
                id: id, host: transfer.host, key: job.map { Self.queueKey($0) } ?? QueueKey(rank: 0, lane: 0, position: 0, order: 0),
                isBackground: job?.state == .running && job?.priorityClass == .background, stopping: transfer.stopping)
        }
    }

    /// Takes the next job to start out of the queue; nil when none can start.
    func nextToStart() -> String? {
        scheduler.next(from: &queue, perHost: Scheduler.perHost(running.values.lazy.map(\.host)), isStartable: isStartable)
    }

    /// Asks the running background transfers the scheduler picks to stop for the jobs waiting
    /// for their slot. Each is queued again when the engine reports it stopped.
    func yieldSlotsToWaitingJobs() {
        // Only a foreground or normal job at the head of the queue can make a transfer yield: the
        // running ones are looked at (their records read) only then.
        guard acceptingWork, !held, !queue.isEmpty, queue[0].key.rank < JobPriority.background.rank,
            running.values.contains(where: { $0.stopping == nil })
        else { return }
        for yield in scheduler.yields(queue: queue, running: slots(), isStartable: isStartable) {
            switch engine.stop(jobID: yield.victim, reason: .yield) {
            case .stopping:
                running[yield.victim]?.stopping = .yield
                logger(forJob: yield.victim).info("background transfer yields its slot", metadata: ["to": "\(yield.forJob)"])
            case .landing, .notRunning:
                // It is ending anyway: its end frees the slot.
                break
            }
        }
    }

    /// Applies the end of a background transfer that yielded its slot: the job is queued again at
    /// the front of its class, from the bytes it kept. The caller frees the slot (`transferEnded`).
    func yielded(_ record: JobRecord) {
        // A pause that came meanwhile holds it.
        if record.paused == true {
            stoppedForPause(record, error: nil)
            return
        }
        var job = record
        job.state = .queued
        job.nextAttemptAt = nil
        job.yielded = true
        job.logAttempt(.yielded)
        save(job)
        logger(forJob: job.id).info("background transfer stopped; it continues when a slot is free", metadata: ["bytes": "\(job.checkpointBytes)"])
        queueJob(job, lane: 0)
        emit(.queued, job)
    }
}
