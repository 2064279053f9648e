import Foundation
import Logging
import Metrics
import TransferProtocol

/// Which queued job starts next, and when a background transfer gives its slot up.
///
/// Queued jobs start by class (`foreground`, `normal`, `background`), then by position within
/// the class (`JobQueue`). A job whose host already has `max_connections_per_host` transfers
/// running is passed over while a job to another host can start; it keeps its place. A running
/// `background` transfer yields when a `foreground` or `normal` job waits for its slot (or for its
/// host): the engine stops it as a pause does (partial file synced, the bytes kept), and it is
/// queued again at the front of its class, to continue from that byte with a ranged request.
extension TransferManager {
    /// Starts queued jobs while slots are free, then lets background transfers yield to jobs still waiting.
    func schedule() {
        while acceptingWork, !held, running.count < configuration.maxConcurrentTransfers, let id = nextToStart() {
            guard var job = jobs[id], job.state == .queued, job.paused != true, let url = URL(string: job.url) else { continue }
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
            if !job.isUpload { countedBytes[id] = job.checkpointBytes }
            running.insert(id)
            runningHosts[id] = job.hostKey
            generations[id] = 0
            engine.start(transferRequest(for: job, url: url))
        }
        yieldSlotsToWaitingJobs()
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
        request.upload = uploadPlan(for: job)
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

    /// Queues `job` in its place (or moves it there when queued already).
    func queueJob(_ job: JobRecord, lane: Int = 1) {
        queue.insert(job.id, key: Self.queueKey(job, lane: lane), host: job.hostKey)
    }

    /// Running transfers per host.
    func runningPerHost() -> [String: Int] {
        var counts: [String: Int] = [:]
        for host in runningHosts.values { counts[host, default: 0] += 1 }
        return counts
    }

    /// Takes the first queued job whose host is below its limit out of the queue; nil when none
    /// can start. Entries of jobs no longer queued (cancelled, paused) are dropped on the way.
    func nextToStart() -> String? {
        let limit = configuration.maxConnectionsPerHost
        let perHost = runningPerHost()
        var open = Set(queue.queuedPerHost.keys.filter { perHost[$0, default: 0] < limit })
        var index = 0
        while !open.isEmpty, index < queue.count {
            let entry = queue[index]
            guard let job = jobs[entry.id], job.state == .queued, job.paused != true else {
                queue.remove(at: index)
                if queue.queuedPerHost[entry.host] == nil { open.remove(entry.host) }
                continue
            }
            guard open.contains(entry.host) else {
                index += 1
                continue
            }
            queue.remove(at: index)
            return entry.id
        }
        return nil
    }

    /// Asks running background transfers to stop for the foreground and normal jobs that cannot
    /// start for want of a slot or of a connection to their host: one transfer per waiting job,
    /// the last in queue order first. Each is queued again when the engine reports it stopped.
    func yieldSlotsToWaitingJobs() {
        guard acceptingWork, !held else { return }
        var candidates: [(id: String, host: String, key: QueueKey)] = running.compactMap { id in
            guard !yielding.contains(id), !stoppingForPause.contains(id), let job = jobs[id], job.state == .running,
                job.priorityClass == .background
            else { return nil }
            return (id, runningHosts[id] ?? job.hostKey, Self.queueKey(job))
        }
        guard !candidates.isEmpty else { return }
        candidates.sort { $0.key < $1.key }
        let limit = configuration.maxConnectionsPerHost
        var perHost = runningPerHost()
        for id in yielding { perHost[runningHosts[id] ?? "", default: 0] -= 1 }
        // Slots free now, or once the transfers already yielding have stopped.
        var free = configuration.maxConcurrentTransfers - running.count + yielding.count
        // Hosts whose waiting jobs no background transfer stands in the way of.
        var blocked = Set<String>()
        for index in 0..<queue.count {
            let entry = queue[index]
            if entry.key.rank >= JobPriority.background.rank { break }
            if blocked.contains(entry.host) { continue }
            guard let job = jobs[entry.id], job.state == .queued, job.paused != true else { continue }
            let hostFull = perHost[entry.host, default: 0] >= limit
            if free > 0, !hostFull {
                // It gets a free slot: the jobs after it do not count on that one.
                free -= 1
                perHost[entry.host, default: 0] += 1
                continue
            }
            let pick = hostFull ? candidates.lastIndex { $0.host == entry.host } : candidates.indices.last
            guard let pick else {
                blocked.insert(entry.host)
                if blocked.count >= queue.queuedPerHost.count { break }
                continue
            }
            let candidate = candidates.remove(at: pick)
            switch engine.stop(jobID: candidate.id) {
            case .stopping:
                yielding.insert(candidate.id)
                logger(forJob: candidate.id).info("background transfer yields its slot", metadata: ["to": "\(entry.id)"])
            case .landing, .notRunning:
                // It is ending anyway: its end frees the slot.
                break
            }
            // The stopped transfer's slot (and its connection to its host) go to this job.
            perHost[candidate.host, default: 0] -= 1
            perHost[entry.host, default: 0] += 1
            if candidates.isEmpty { break }
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
