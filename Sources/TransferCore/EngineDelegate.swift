import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The URLSession delegate: writes bodies to partial files, applies back-pressure, checkpoints,
/// and lands finished files.
///
/// `@unchecked Sendable`: `session` is set once right after init, before any task exists; the
/// tables are behind `state`; per-transfer data follows `TransferContext`'s rules.
final class EngineDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    struct State {
        var byJob: [String: TransferContext] = [:]
        var byTask: [Int: TransferContext] = [:]
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var stopped: [String: StoppedTransfer] = [:]
        /// Jobs handed to `start` whose context does not exist yet.
        var starting: Set<String> = []
        /// Of those, the ones cancelled before they began.
        var cancelledBeforeStart: Set<String> = []
        /// Set by `stopAll`: transfers that begin from now on stop at once, keeping their files.
        var stoppingAll = false
        /// The running digests of interrupted transfers, so a retry in this run continues them
        /// instead of reading the partial file again.
        var suspended: [String: SuspendedDigest] = [:]
        var isIdle: Bool { byJob.isEmpty && starting.isEmpty }
    }

    let configuration: EngineConfiguration
    let hosts: HostGuard
    let queue: OperationQueue
    let logger: Logger
    let events: AsyncStream<EngineEvent>.Continuation
    let state = Mutex(State())
    /// Syncs partial files off the delegate queue, so a slow disk flush never stalls receiving.
    let ioQueue = DispatchQueue(label: "transferd.engine.io", attributes: .concurrent)
    weak var session: URLSession?
    let checkpointIntervalNanoseconds: UInt64
    /// Checks deadlines and low-speed limits once a second.
    let ticker: any DispatchSourceTimer

    init(
        configuration: EngineConfiguration, hosts: HostGuard, queue: OperationQueue, logger: Logger,
        events: AsyncStream<EngineEvent>.Continuation
    ) {
        self.configuration = configuration
        self.hosts = hosts
        let interval = configuration.checkpointInterval.components
        self.checkpointIntervalNanoseconds = UInt64(max(interval.seconds, 0)) * 1_000_000_000 + UInt64(max(interval.attoseconds, 0) / 1_000_000_000)
        self.queue = queue
        self.logger = logger
        self.events = events
        self.ticker = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.engine.ticker"))
        super.init()
        ticker.schedule(deadline: .now() + 1, repeating: 1)
        ticker.setEventHandler { [weak self] in
            guard let self else { return }
            self.queue.addOperation { self.checkLimits() }
        }
        ticker.resume()
    }

    deinit {
        ticker.cancel()
    }

    // MARK: - Control from the core

    /// Checks the host, opens the partial file and restores its digest off the delegate queue,
    /// then begins.
    func start(_ request: TransferRequest) {
        let suspended: SuspendedDigest? = state.withLock { state in
            state.starting.insert(request.jobID)
            return state.suspended.removeValue(forKey: request.jobID)
        }
        ioQueue.async {
            // Before every attempt: the rules may have changed, and the name may resolve elsewhere now.
            let preparation: Preparation
            if let refused = self.hostFailure(for: request.url) {
                preparation = .refused(refused)
            } else {
                preparation = .opened(Self.prepare(request, suspended: suspended))
            }
            self.queue.addOperation { self.begin(request, preparation, suspended: suspended) }
        }
    }

    /// Forgets what an interrupted transfer left in memory (the job was cancelled or failed).
    func forget(jobID: String) {
        state.withLock { _ = $0.suspended.removeValue(forKey: jobID) }
    }

    func cancel(jobID: String) -> CancelOutcome {
        let found: TransferContext?? = state.withLock { state in
            if state.starting.contains(jobID) {
                state.cancelledBeforeStart.insert(jobID)
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) } ?? nil
        }
        guard let found else { return .notRunning }
        guard let context = found else { return .cancelled }
        return context.control.withLock { control in
            switch control.phase {
            case .landing: return .landing
            case .cancelling: return .cancelled
            case .stopping: return .notRunning
            case .active, .pausing:
                control.phase = .cancelling
                control.task?.cancel()
                return .cancelled
            }
        }
    }

    func stopAll() async -> [String: StoppedTransfer] {
        let contexts = state.withLock { state in
            state.stoppingAll = true
            return Array(state.byJob.values)
        }
        for context in contexts {
            context.control.withLock { control in
                if control.phase == .active || control.phase == .pausing {
                    control.phase = .stopping
                    control.task?.cancel()
                }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = state.withLock { state in
                if state.isIdle { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return state.withLock { $0.stopped }
    }

    func finishEvents() {
        events.finish()
    }

    func progress(jobID: String) -> TransferProgress? {
        guard let context = state.withLock({ $0.byJob[jobID] }) else { return nil }
        return TransferProgress(
            bytes: context.progress.load(ordering: .relaxed),
            bytesPerSecond: context.rate.load(ordering: .relaxed))
    }


    // MARK: - Delegate callbacks (on the delegate queue)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let context = state.withLock({ $0.byTask[dataTask.taskIdentifier] }) else {
            completionHandler(.cancel)
            return
        }
        // A refused redirect (or a limit) already decided how this attempt ends; a redirect to
        // follow is asked for once this answer (the 3xx) is done.
        guard context.failure == nil, context.pendingRedirect == nil else {
            completionHandler(.cancel)
            return
        }
        guard let http = response as? HTTPURLResponse else {
            context.failure = .permanent(JobError(code: "protocol", message: "the server's answer is not HTTP"))
            completionHandler(.cancel)
            return
        }
        // An interim answer (100 Continue, 103 Early Hints…): the final one follows on the same
        // request, as HTTP says. 101 would switch protocols, which no download asks for.
        if (100...199).contains(http.statusCode), http.statusCode != 101 {
            completionHandler(.allow)
            return
        }
        context.statusCode = http.statusCode
        if let lengths = http.value(forHTTPHeaderField: "Content-Length"), let problem = ContentLength.conflict(lengths) {
            // RFC 9112 §6.3: differing lengths make the framing unknowable; the body cannot be trusted.
            context.failure = .permanent(
                JobError(code: "protocol", message: "\(context.request.url.host ?? "the server") sent \(problem); the answer's length cannot be trusted and nothing was kept"))
            completionHandler(.cancel)
            return
        }
        if let url = http.url, url != context.request.url { context.finalURL = url }
        let contentEncoding = http.value(forHTTPHeaderField: "Content-Encoding")?.lowercased()
        if let contentEncoding, contentEncoding != "identity" {
            context.failure = .permanent(
                JobError(
                    code: "content_encoding",
                    message: "the server sent the body with Content-Encoding \(contentEncoding) although identity was asked for; "
                        + "the bytes would not be the file's bytes"))
            completionHandler(.cancel)
            return
        }
        let length = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
        switch http.statusCode {
        case 200:
            // The server ignores ranges (or the file changed): the body is the whole file.
            context.rangesUsable = false
            if context.offset > 0 {
                // The server ignored the range or the file changed: never append a 200 body.
                do throws(FileIOError) {
                    try startOver(context, because: "the server answered 200 to a resume")
                } catch {
                    context.failure = Self.diskFailure(error, writing: context.file.path)
                    completionHandler(.cancel)
                    return
                }
            }
            context.totalBytes = length
        case 206:
            guard let range = ContentRange(http.value(forHTTPHeaderField: "Content-Range")), range.start == context.offset else {
                // The server's ranges cannot be trusted: fetch the whole file in one piece.
                context.rangesUsable = false
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            guard context.totalBytes == nil || range.total == nil || range.total == context.totalBytes else {
                // Another size: another version of the file.
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            let answered = Self.strongValidator(http)
            if context.offset > 0, let asked = context.validator, answered != asked {
                // The server ignored If-Range and sent a range of a different version.
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            if answered == nil, context.validator == nil, range.end + 1 < (range.total ?? Int64.max) {
                // Without a validator, a later range could come from a changed file: fetch the
                // file in one piece instead of stitching ranges together.
                context.rangesUsable = false
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            context.totalBytes = range.total ?? context.totalBytes
            context.segmentEnd = range.end
        case 416:
            let total = UnsatisfiedRange(http.value(forHTTPHeaderField: "Content-Range"))?.total
            let answered = Self.strongValidator(http)
            let sameVersion = context.validator != nil && (answered == nil || answered == context.validator)
            if let total, total == context.offset, context.offset == 0 || sameVersion {
                // Everything is here already (or the file is empty).
                context.totalBytes = total
                context.alreadyComplete = true
            } else {
                context.restartFromZero = true
                // A server that cannot satisfy a range from byte 0 gets a plain request next.
                if context.offset == 0 { context.rangesUsable = false }
            }
            completionHandler(.cancel)
            return
        default:
            context.failure = Self.statusFailure(http, url: context.request.url)
            completionHandler(.cancel)
            return
        }
        // What the server says the representation's digest is. Content-Digest describes the body
        // sent, which for a 200 (without content coding) is the whole representation.
        if let announced = AnnouncedDigest.parse(http.value(forHTTPHeaderField: "Repr-Digest"), header: "Repr-Digest")
            ?? (http.statusCode == 200 ? AnnouncedDigest.parse(http.value(forHTTPHeaderField: "Content-Digest"), header: "Content-Digest") : nil)
        {
            context.announcedDigest = announced
            if announced.algorithm == .sha512, context.offset == 0, context.digest.current().sha512 == nil {
                context.digest.reset(to: FileDigest(withSHA512: true))
            }
        }
        if let failure = checkSize(context) {
            context.failure = failure
            completionHandler(.cancel)
            return
        }
        let validator = Self.strongValidator(http) ?? context.validator
        // Report the first answer, and any that changes what a resume depends on.
        if !context.reportedResponse || validator != context.validator || context.offset == 0 || http.statusCode == 200 {
            context.reportedResponse = true
            events.yield(
                .responded(
                    jobID: context.request.jobID, totalBytes: context.totalBytes,
                    validator: validator, startOffset: context.offset, partialInode: context.file.inode,
                    generation: context.generation.load(ordering: .sequentiallyConsistent),
                    finalURL: context.finalURL.map(Redaction.url)))
        }
        context.validator = validator
        completionHandler(.allow)
    }

    /// Checks a newly announced size against the client's expectation and the free space.
    func checkSize(_ context: TransferContext) -> TransferFailure? {
        guard let total = context.totalBytes else { return nil }
        if let expected = context.request.expectedSize, expected != total {
            return .permanent(
                JobError(
                    code: "size_mismatch",
                    message: "the server says \(Redaction.url(context.request.url)) is \(total) bytes, but \(expected) were expected; "
                        + "nothing was kept. Check the URL and the expected size, then submit again"))
        }
        guard !context.checkedSpace else { return nil }
        context.checkedSpace = true
        let directory = context.file.directory.path
        let needed = total - context.offset
        guard let available = context.file.directory.availableBytes(),
            available - context.request.diskReserveBytes < needed
        else { return nil }
        return .transient(
            JobError(
                code: "disk_full",
                message: "\(directory) has \(available) bytes free, but the download needs \(needed) more and "
                    + "\(context.request.diskReserveBytes) are kept free (disk_reserve_bytes); free some space: the job retries"))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let context = state.withLock({ $0.byTask[dataTask.taskIdentifier] }) else { return }
        let phase = context.phase
        // Only a 200 or 206 body is the file's bytes; an error page after a refused answer
        // (which FoundationNetworking may still deliver) never is.
        guard phase == .active || phase == .pausing || phase == .stopping, context.failure == nil,
            !context.restartFromZero, !context.alreadyComplete,
            context.statusCode == 200 || context.statusCode == 206
        else { return }
        do throws(FileIOError) {
            var failure: FileIOError?
            data.withUnsafeBytes { raw in
                do throws(FileIOError) {
                    try FileIO.writeAll(context.file.fd, raw, path: context.file.path)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        } catch {
            context.failure = Self.diskFailure(error, writing: context.file.path)
            dataTask.cancel()
            return
        }
        context.digest.feed(data)
        setOffset(context, context.offset + Int64(data.count))
        if configuration.writeDelayMicroseconds > 0 { usleep(configuration.writeDelayMicroseconds) }

        let now = MonotonicClock.nanoseconds()
        if now &- context.rateSampleTime >= 1_000_000_000 {
            let elapsed = Double(now &- context.rateSampleTime) / 1e9
            context.rate.store(Int64(Double(context.offset - context.rateSampleOffset) / elapsed), ordering: .relaxed)
            context.rateSampleTime = now
            context.rateSampleOffset = context.offset
        }
        // A checkpoint starts every half of checkpointBytes, so that while one is syncing the bytes
        // not yet durable stay within checkpointBytes: what a crash may cost.
        if context.offset - context.lastCheckpointOffset >= configuration.checkpointBytes / 2
            || now &- context.lastCheckpointTime >= checkpointIntervalNanoseconds
        {
            checkpoint(context, now: now)
        }
        // The backlog moves slowly relative to single chunks: sample it on every 8th.
        context.chunks &+= 1
        guard context.chunks & 7 == 0 else { return }
        let backlog = queue.operationCount + context.digest.pending
        if backlog > context.segmentPeakBacklog { context.segmentPeakBacklog = backlog }
        // Pausing continues with a ranged request, which only a 206 with a validator makes safe.
        if phase == .active, context.statusCode == 206, context.validator != nil, backlog > configuration.backlogHighWater {
            context.control.withLock { control in
                guard control.phase == .active else { return }
                control.phase = .pausing
                control.task?.cancel()
            }
            context.request.logger.debug("pausing a transfer while the disk catches up", metadata: ["offset": "\(context.offset)", "backlog": "\(queue.operationCount)"])
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let context = state.withLock({ $0.byTask.removeValue(forKey: task.taskIdentifier) }) else { return }
        context.control.withLock { $0.task = nil }
        switch context.phase {
        case .pausing:
            resumeWhenDrained(context)
            return
        case .cancelling:
            finishCancelled(context)
            return
        case .stopping:
            finishStopped(context)
            return
        case .landing:
            return
        case .active:
            break
        }
        if context.alreadyComplete {
            finishReceived(context)
            return
        }
        if context.restartFromZero {
            context.restarts += 1
            guard context.restarts <= 3 else {
                fail(context, JobError(code: "protocol", message: "the server's answers to range requests do not agree with each other or with the file; gave up after \(context.restarts) restarts"))
                return
            }
            do throws(FileIOError) {
                try startOver(context, because: "the server's ranged answer did not continue the file")
            } catch {
                end(context, Self.diskFailure(error, writing: context.file.path))
                return
            }
            context.validator = nil
            context.totalBytes = nil
            sendRequest(context)
            return
        }
        if let failure = context.failure {
            end(context, failure)
            return
        }
        if let target = context.pendingRedirect {
            context.pendingRedirect = nil
            follow(context, to: target)
            return
        }
        if let error {
            var failure = Self.networkFailure(error, context: context)
            if let total = context.totalBytes, failure.retryable {
                failure.error.message += " (after \(context.offset) of \(total) bytes)"
            }
            end(context, failure)
            return
        }
        if context.statusCode == 206, let end = context.segmentEnd, context.offset - 1 == end,
            let total = context.totalBytes, context.offset < total
        {
            // One segment done: size the next one by how much piled up during this one.
            adaptSegment(context)
            resumeWhenDrained(context)
            return
        }
        if let total = context.totalBytes, context.offset < total {
            end(
                context,
                .transient(
                    JobError(
                        code: "connection_lost",
                        message: "the connection to \(context.request.url.host ?? "the server") ended after \(context.offset) of \(total) bytes")))
            return
        }
        finishReceived(context)
    }

    /// The body has ended: land the file if it has exactly the announced size.
    func finishReceived(_ context: TransferContext) {
        if let total = context.totalBytes, total != context.offset {
            fail(
                context,
                JobError(
                    code: "size_mismatch",
                    message: "the server announced \(total) bytes but sent \(context.offset); the file was not kept. "
                        + "Submit the job again; if it keeps happening, the server is sending a damaged response"))
            return
        }
        land(context)
    }
}
