import Foundation
import TransferProtocol
import Logging
import Metrics
#if canImport(Glibc)
import Glibc
#endif

extension TransferManager {
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
        case .responded(_, let total, let validator, let startOffset, let inode, let generation, let finalURL, let coding, let refused):
            guard job.state == .running else { return }
            running[job.id]?.generation = generation
            // Ranges kept past the checkpoint belong to the version they were fetched of.
            if startOffset == 0 || validator != job.validator { job.parts = nil }
            job.totalBytes = total
            job.validator = validator
            job.partialInode = inode
            job.finalUrl = finalURL
            job.contentEncoding = coding
            job.rangesRefused = refused ? true : nil
            if startOffset < job.checkpointBytes { job.checkpointBytes = startOffset }
            // Bytes before the offset were counted, or were there before this attempt.
            if running[job.id]?.countedBytes != nil { running[job.id]?.countedBytes = startOffset }
            // Written at once: start-up knows a file that landed before its "completed" record by
            // this inode, and a short download lands within a millisecond or two.
            save(job, promptly: true)
            if startOffset > 0 {
                logger(forJob: job.id).info("transfer resumed", metadata: ["bytes": "\(startOffset)", "attempt": "\(job.attempts)"])
            }
        case .checkpoint(_, let bytes, let parts, let generation):
            // A sync that began before the file was cut back to 0 does not describe it any more.
            guard job.state == .running, generation == running[job.id]?.generation else { return }
            countReceived(job.id, upTo: bytes + parts.reduce(0) { $0 + $1.count })
            job.checkpointBytes = bytes
            job.parts = parts.isEmpty ? nil : parts
            save(job)
            logger(forJob: job.id).debug("checkpoint", metadata: ["bytes": "\(bytes)", "ahead": "\(parts.reduce(0) { $0 + $1.count })"])
        case .completed(_, let bytes, let sha256):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            countReceived(job.id, upTo: bytes)
            job.totalBytes = bytes
            job.sha256 = sha256
            complete(job, holding: bytes, as: .completed)
            logger(forJob: job.id).info("job completed: the file landed", metadata: ["destination": "\(job.destination)", "bytes": "\(bytes)", "sha256": "\(sha256)"])
        case .uploaded(_, let bytes, let response):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            uploadCompleted(job, bytes: bytes, response: response)
        case .uploadProgressed(_, let protocolUsed, let resource, let offset):
            guard job.state == .running else { return }
            uploadProgressed(job, protocolUsed: protocolUsed, resource: resource, offset: offset)
        case .unchanged:
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            completedUnchanged(job)
        case .failed(_, let error):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            markFailed(job, error)
        case .interrupted(_, let error, let kept, let retryAfter):
            defer { transferEnded(job.id) }
            guard job.state == .running else { return }
            countReceived(job.id, upTo: kept.bytes + kept.parts.reduce(0) { $0 + $1.count })
            job.checkpointBytes = kept.bytes
            job.parts = kept.parts.isEmpty ? nil : kept.parts
            job.validator = kept.validator
            job.totalBytes = kept.totalBytes
            // A pause that met a failure on its way: held, not retried, until resumed.
            if job.paused == true || running[job.id]?.stopping == .pause {
                stoppedForPause(job, error: error)
                return
            }
            // A background transfer asked to yield that failed on its way: it yields all the same.
            if running[job.id]?.stopping == .yield {
                yielded(job)
                return
            }
            retryOrFail(job, error: error, retryAfter: retryAfter)
        case .stopped(_, let bytes, let reason):
            defer { transferEnded(job.id) }
            // A cancelled job's record was written by `cancel`.
            guard job.state == .running else { return }
            countReceived(job.id, upTo: bytes)
            job.checkpointBytes = bytes
            // The engine reports the reason the core gave it (shutdown's when the core gave none).
            switch running[job.id]?.stopping ?? reason {
            case .pause:
                stoppedForPause(job, error: nil)
            case .yield:
                yielded(job)
            case .shutdown, .cancel:
                // Stopped for shutdown: it stays running in the journal and resumes on restart.
                job.logAttempt(.stopped)
                save(job)
                logger(forJob: job.id).info("transfer stopped; it resumes after the restart", metadata: ["bytes": "\(bytes)"])
            }
        }
    }

    static let progressThatResetsFailures: Int64 = 1 << 20
    /// The longest wait before a retry, whatever the server asks for.
    static let longestRetryWait: Double = 7 * 86_400

    /// After a failed attempt: waits and retries when the job's limits allow, else fails it.
    func retryOrFail(_ record: JobRecord, error: JobError, retryAfter: Double?) {
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
        let deadline = job.endOfTime(maxTime: limits.maxTime)
        var giveUp: String?
        var pastDeadline = false
        if failures >= limits.maxAttempts {
            giveUp = "gave up after \(failures) failed attempt\(failures == 1 ? "" : "s") in a row (max_attempts \(limits.maxAttempts))"
        } else if next > deadline {
            pastDeadline = job.deadline == deadline
            let which = pastDeadline ? "deadline" : "maximum time (max_time_seconds)"
            giveUp = "gave up: the next attempt would start after the job's \(which) ends at \(WireCoding.formatTimestamp(deadline))"
        }
        if let giveUp {
            // The engine kept the partial file for the next attempt. A resumable one stays for
            // `retry` (removed with the job); one that cannot be resumed goes now.
            if job.validator == nil || job.checkpointBytes == 0 {
                PartialFile.remove(job.partialPath, roots: roots(for: job))
            }
            engine.forget(jobID: job.id)
            var last = error
            last.message = "\(giveUp); the last attempt failed: \(error.message)"
            // A deadline the submitter gave ends the job as time_limit, whatever the last attempt met.
            if pastDeadline { last = JobError(code: .timeLimit, message: last.message, httpStatus: error.httpStatus) }
            markFailed(job, last)
            return
        }
        job.state = .waiting
        job.error = error
        job.nextAttemptAt = next
        job.logAttempt(.retry, error: error, next: next)
        save(job)
        metrics.retries.increment()
        emit(.waiting, job)
        logger(forJob: job.id).info(
            "job waits to retry",
            metadata: ["attempt": "\(job.attempts)", "retry_at": "\(WireCoding.formatTimestamp(next))", "error": "\(error.message)"])
        armRetry(job.id, at: next)
        if error.code == .dns { checkHostExists(job) }
    }

    /// Ends a job as completed, holding `bytes`: the record, the attempt's log line and the
    /// terminal event, the same for a file that landed, one that had not changed and an upload
    /// the server accepted.
    func complete(_ record: JobRecord, holding bytes: Int64, as outcome: AttemptRecord.Outcome) {
        var job = record
        metrics.transfersCompleted.increment()
        job.state = .completed
        job.finishedAt = Date()
        job.checkpointBytes = bytes
        job.parts = nil
        job.error = nil
        job.logAttempt(outcome)
        let event = ended(&job)
        save(job)
        enqueue(event)
    }

    /// Records that a job failed for good.
    func markFailed(_ record: JobRecord, _ error: JobError) {
        var job = record
        job.state = .failed
        job.finishedAt = Date()
        job.error = error
        job.nextAttemptAt = nil
        job.logAttempt(.failed, error: error)
        let event = ended(&job)
        save(job)
        abandonUpload(job)
        enqueue(event)
        metrics.failed(code: error.code)
        logger(forJob: job.id).warning("job failed", metadata: ["attempt": "\(job.attempts)", "error": "\(error.message)"])
    }

    /// Queues a waiting job again once `date` has come.
    func armRetry(_ id: String, at date: Date) {
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

    /// Queues a job whose start time (`not_before`) has come, in its place by submission order.
    func armStart(_ id: String, at date: Date) {
        startTimers[id]?.cancel()
        startTimers[id] = Task { [weak self] in
            let delay = min(date.timeIntervalSinceNow, Self.longestRetryWait * 2)
            if delay > 0 {
                do { try await Task.sleep(for: .milliseconds(Int64(delay * 1000) + 1)) } catch { return }
            }
            await self?.startDue(id)
        }
    }

    func startDue(_ id: String) {
        startTimers[id] = nil
        guard let job = jobs[id], job.state == .queued, job.paused != true, !queue.contains(id) else { return }
        // A time further ahead than one timer's wait: wait again.
        if let notBefore = job.notBefore, notBefore > Date() {
            armStart(id, at: notBefore)
            return
        }
        logger(forJob: id).info("start time reached")
        queueJob(job)
        schedule()
    }

    func retryDue(_ id: String) {
        retryTimers[id] = nil
        guard var job = jobs[id], job.state == .waiting, job.paused != true else { return }
        job.state = .queued
        job.nextAttemptAt = nil
        save(job)
        emit(.queued, job)
        logger(forJob: id).info("retrying", metadata: ["attempt": "\(job.attempts + 1)", "bytes": "\(job.checkpointBytes)"])
        // Back in its place in its class, ahead of jobs submitted after it.
        queueJob(job)
        schedule()
    }

    /// Frees the transfer's slot and starts the next queued job (after the ended job's record
    /// is written: callers defer it).
    func transferEnded(_ id: String) {
        running.removeValue(forKey: id)?.endWaiters.forEach { $0.resume() }
        schedule()
    }
}
