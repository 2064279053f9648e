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

/// Runs uploads through the engine's one URLSession. A plain upload's body is a stream of the
/// spool copy (`uploadTask(withStreamedRequest:)`; the stream is `BodyLength.stream(ofFileAt:)`), sent with
/// `Content-Length`: FoundationNetworking reads a file body (`fromFile:`) through DispatchIO in
/// small pieces, about a fifth as fast, and would send a stream chunked, which S3-style servers
/// refuse, so the request names its length in a private header that CLinuxShims hands to libcurl
/// (`BodyLength`). A resumable upload's appends send bounded `Data` ranges. The shell of
/// `UploadMachine`: it feeds each upload's machine what happens (callbacks arriving
/// through `SessionDelegate`, a stop or cancel from the core, the host check, the spool read,
/// the pace's timer) on the delegate queue, and carries out what the machine decides.
///
/// `@unchecked Sendable`: `session` is set once right after init, before any task exists;
/// everything else is immutable or locked.
final class UploadRunner: @unchecked Sendable {
    let configuration: EngineConfiguration
    let hosts: HostGuard
    /// The bandwidth limits: a resumable upload's appends are paced to them.
    let rates: RateGovernor
    let queues: EngineQueues
    let events: AsyncStream<EngineEvent>.Continuation
    weak var session: URLSession?
    /// The engine's table of running tasks, shared with downloads.
    let tasks: EngineTasks
    /// The uploads running and starting, by job.
    private let roster = TransferRoster<UploadContext>()

    init(
        configuration: EngineConfiguration, hosts: HostGuard, rates: RateGovernor = RateGovernor(), queues: EngineQueues,
        tasks: EngineTasks, events: AsyncStream<EngineEvent>.Continuation
    ) {
        self.tasks = tasks
        self.configuration = configuration
        self.hosts = hosts
        self.rates = rates
        self.queues = queues
        self.events = events
    }

    // MARK: - Control from the core

    /// Checks the host and the spool copy on the I/O queue, then sends.
    func start(_ request: TransferRequest, _ plan: UploadPlan) {
        roster.beginStarting(request.jobID)
        queues.onIO {
            var found = TransferPreparation.hostFailure(for: request.url, hosts: self.hosts)
            var info = stat()
            if found == nil, plan.spoolPath.isEmpty || stat(plan.spoolPath, &info) != 0 || Int64(info.st_size) != plan.size {
                let copy = plan.spoolPath.isEmpty ? "the upload has no spool copy of its file" : "the spool copy of the file (\(plan.spoolPath)) is missing or damaged"
                found = .permanent(JobError(code: .disk, message: "\(copy): hand the file over again"))
            }
            let refusal = found
            self.queues.onDelegate { self.begin(request, plan, refusal: refusal) }
        }
    }

    private func begin(_ request: TransferRequest, _ plan: UploadPlan, refusal: TransferFailure?) {
        queues.assertOnDelegate()
        let jobID = request.jobID
        var settings = UploadAttempt.Settings(url: request.url, size: plan.size, bodyLimit: configuration.uploadResponseBodyBytes)
        settings.resumable = plan.resumable
        settings.protocolUsed = plan.protocolUsed
        settings.resource = plan.resource
        rates.join(jobID, limit: request.limitRate, bandwidthClass: request.bandwidthClass)
        // A paced upload appends about a quarter second's worth at a time.
        settings.segmentBytes =
            RatePacer.segmentBytes(for: rates.rate(for: jobID), upTo: configuration.uploadSegmentBytes) ?? configuration.uploadSegmentBytes
        settings.contentType = plan.contentType
        settings.fileName = plan.fileName
        settings.method = plan.method
        settings.contentDigest = plan.contentDigest
        let context = UploadContext(request: request, plan: plan, attempt: UploadAttempt(settings: settings), queues: queues)
        // A stop or cancel that came while it started, or a refused start, ends it before its
        // first request, as the machine decides.
        let first: UploadMachine.Input
        if let reason = roster.admitRunning(jobID, context) {
            first = .stop(reason)
        } else if let refusal {
            first = .fail(refusal)
        } else {
            first = .start(clock(context))
        }
        feed(first, context)
    }

    /// Sends the DELETE of an upload resource, once the host rules allow its host (checked on the
    /// I/O queue: the name may need resolving). Its answer reaches no transfer and is dropped.
    func terminate(_ termination: UploadTermination) {
        queues.onIO {
            if let refused = TransferPreparation.hostFailure(for: termination.resource, hosts: self.hosts) {
                termination.logger.info(
                    "the upload resource was not deleted on the server", metadata: ["reason": "\(refused.error.message)"])
                return
            }
            guard let session = self.session else { return }
            let request = UploadAttempt.termination(of: termination.resource, termination.protocolUsed)
            let headers = termination.jobURL.map { Self.credentials(termination.headers, for: termination.resource, jobURL: $0) }
                ?? Self.withoutCredentials(termination.headers)
            var urlRequest = Self.urlRequest(request, headers: headers, idleTimeout: self.configuration.idleTimeout)
            if let pem = termination.cacert { Trust.add(pem, to: &urlRequest, job: termination.jobID) }
            let task = session.dataTask(with: urlRequest)
            task.taskDescription = termination.jobID
            task.resume()
            termination.logger.info(
                "asked the server to delete the upload resource", metadata: ["resource": "\(Redaction.url(termination.resource))"])
        }
    }

    /// nil when the job is not an upload this runner knows.
    func cancel(jobID: String) -> CancelOutcome? {
        guard let context = roster.claim(jobID, for: .cancel) else { return nil }
        if let context { post(.cancel, to: context) }
        return .cancelled
    }

    /// Stops one upload (a pause); nil when the job is not an upload this runner knows. A plain
    /// upload keeps nothing: it is sent from byte 0 when resumed; a resumable one continues from
    /// the offset the server reports. The stop is an input to the machine, which ends the upload
    /// with its one end; a stop or failure decided before it stands, and then the answer is
    /// `.notRunning`: its end, already on its way, is not this stop's.
    func stop(jobID: String, reason: StopReason) -> StopOutcome? {
        guard let context = roster.claim(jobID, for: reason) else { return nil }
        guard let context else { return .stopping }
        if context.closing.load(ordering: .acquiring) { return .notRunning }
        post(.stop(reason), to: context)
        return .stopping
    }

    /// Hands an input from another thread to the upload's machine, on the delegate queue.
    private func post(_ input: UploadMachine.Input, to context: UploadContext) {
        queues.onDelegateFirst { self.feed(input, context) }
    }

    func stopAll() async {
        for context in roster.beginStoppingAll() { post(.stop(.shutdown), to: context) }
        await roster.waitUntilIdle()
    }

    func progress(jobID: String) -> TransferProgress? {
        guard let context = roster.context(forJob: jobID) else { return nil }
        var progress = context.progress
        progress.pacedRate = rates.rate(for: jobID)
        // A plain upload is one request: nothing to pace between.
        progress.limitUnheld = progress.pacedRate != nil && context.sendsWholeFile.load(ordering: .relaxed)
        return progress
    }

    // MARK: - Carrying out decisions (delegate queue)

    /// Gives `input` to the upload's machine and carries out what it decides; returns the
    /// disposition of a response.
    @discardableResult
    func feed(_ input: UploadMachine.Input, _ context: UploadContext) -> URLSession.ResponseDisposition {
        queues.assertOnDelegate()
        let actions = context.machine.handle(input)
        if !context.machine.isRunning { context.closing.store(true, ordering: .releasing) }
        return perform(actions, context)
    }

    /// The moment of an input, as the machine reads it: the monotonic clock and the job's rate limit.
    func clock(_ context: UploadContext) -> UploadMachine.Clock {
        UploadMachine.Clock(now: MonotonicClock.nanoseconds(), rate: rates.rate(for: context.request.jobID))
    }

    @discardableResult
    func perform(_ actions: [UploadMachine.Action], _ context: UploadContext) -> URLSession.ResponseDisposition {
        var disposition = URLSession.ResponseDisposition.cancel
        let jobID = context.request.jobID
        for action in actions {
            switch action {
            case .checkHost(let url):
                checkHost(url, context)
            case .read(let range):
                read(range, context)
            case .wake(let due):
                // One timer, armed for `due` or for when the rate limits may change by themselves.
                context.wakeup.park(.paced, until: rates.recheckTime(due: due, now: MonotonicClock.nanoseconds())) {
                    self.feed(.paceTimerFired(self.clock(context)), context)
                }
            case .send(let request, let body, let base):
                send(request, body: body, base: base, context)
            case .acceptBody:
                disposition = .allow
            case .refuseBody:
                disposition = .cancel
            case .cancelRequest:
                context.task?.cancel()
            case .record(let protocolUsed, let resource, let offset):
                events.yield(.uploadProgressed(jobID: jobID, protocolUsed: protocolUsed, resource: resource?.absoluteString, offset: offset))
            case .complete(let response):
                context.request.logger.info("upload accepted", metadata: ["status": "\(response.status)"])
                end(context, .uploaded(jobID: jobID, bytes: context.plan.size, response: response))
            case .retryLater(let failure, let kept):
                context.request.logger.info("upload interrupted", metadata: ["error": "\(failure.error.message)"])
                let stopped = StoppedTransfer(bytes: kept, validator: nil, totalBytes: context.plan.size)
                end(context, .interrupted(jobID: jobID, error: failure.error, kept: stopped, retryAfter: failure.retryAfter))
            case .fail(let error):
                context.request.logger.warning("upload failed", metadata: ["error": "\(error.message)"])
                end(context, .failed(jobID: jobID, error: error))
            case .stopped(let reason, let kept):
                end(context, .stopped(jobID: jobID, bytes: kept, reason: reason))
            }
        }
        return disposition
    }

    /// Reads bytes `range` of the spool copy on the I/O queue, into one bounded `Data`:
    /// FoundationNetworking sends it with `Content-Length`, and never reads the file itself after
    /// the request ended.
    private func read(_ range: Range<Int64>, _ context: UploadContext) {
        let path = context.plan.spoolPath
        queues.onIO {
            let body = Result { () throws(CoreError) -> Data in try Self.read(range, of: path) }
            self.queues.onDelegate { self.feed(.segmentRead(body), context) }
        }
    }

    /// Wakes the uploads that wait for their pace, to look at their rate again.
    func ratesChanged() {
        for context in running { context.wakeup.wake([.paced]) }
    }

    private func send(_ request: UploadAttempt.Request, body: Data?, base: Int64, _ context: UploadContext) {
        guard let session else {
            // The engine is gone: the upload ends as at shutdown.
            feed(.stop(.shutdown), context)
            feed(.requestEnded(nil, clock(context)), context)
            return
        }
        if request.body == .wholeFile { context.sendsWholeFile.store(true, ordering: .relaxed) }
        let urlRequest = Self.urlRequest(request, for: context)
        let task: URLSessionTask
        switch request.body {
        case .none: task = session.dataTask(with: urlRequest)
        // The body comes from `SessionDelegate`'s `needNewBodyStream`, which URLSession asks at each send.
        case .wholeFile: task = session.uploadTask(withStreamedRequest: urlRequest)
        case .range: task = session.uploadTask(with: urlRequest, from: body ?? Data())
        }
        task.taskDescription = context.request.jobID
        context.beginRequest(at: base)
        tasks.register(task.taskIdentifier, .upload(context))
        context.task = task
        task.resume()
    }

    /// A request of the upload: the job's headers, then the request's own (method, Content-Type,
    /// digests, the resumable protocol's fields). libcurl adds Content-Length from a `Data`
    /// body's size, and from the length a whole file's request names (`BodyLength`).
    static func urlRequest(_ request: UploadAttempt.Request, for context: UploadContext) -> URLRequest {
        let headers = credentials(context.request.headers, for: request.url, jobURL: context.request.url)
        var urlRequest = urlRequest(request, headers: headers, idleTimeout: context.request.limits.idleTimeout)
        if request.body == .wholeFile {
            if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            }
            BodyLength.add(context.plan.size, to: &urlRequest)
        }
        if let pem = context.request.cacert { Trust.add(pem, to: &urlRequest, job: context.request.jobID) }
        return urlRequest
    }

    /// `request` with the job's own `headers` under the protocol's.
    static func urlRequest(_ request: UploadAttempt.Request, headers: [String: String], idleTimeout: Double) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = HTTPScheme.timeout(idleTimeout)
        for (name, value) in headers where !BodyLength.isPrivate(name) { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    /// Bytes `range` of the spool copy.
    static func read(_ range: Range<Int64>, of path: String) throws(CoreError) -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CoreError(.internalFailure, "cannot open the spool copy \(path) (\(String(cString: strerror(errno)))): hand the file over again")
        }
        defer { close(fd) }
        var data = Data(count: Int(range.count))
        let done = data.withUnsafeMutableBytes { buffer -> Int in
            var done = 0
            while done < buffer.count {
                let n = pread(fd, buffer.baseAddress.map { $0 + done }, buffer.count - done, off_t(range.lowerBound) + off_t(done))
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return n < 0 ? -1 : done }
                done += n
            }
            return done
        }
        guard done == range.count else {
            throw CoreError(.internalFailure, "cannot read the spool copy \(path) at \(range.lowerBound) (\(done < 0 ? String(cString: strerror(errno)) : "it is shorter than it was")): hand the file over again")
        }
        return data
    }

    /// The uploads running now.
    var running: [UploadContext] { roster.running }

    /// Reports how the upload ended and forgets it. A pace's wait still armed ends now: the
    /// machine, ended, ignores the input its wake-up brings.
    func end(_ context: UploadContext, _ event: EngineEvent) {
        context.wakeup.wake()
        rates.leave(context.request.jobID)
        events.yield(event)
        roster.remove(context.request.jobID)
    }
}
