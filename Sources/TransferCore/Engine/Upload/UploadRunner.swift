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

/// Runs uploads through the engine's one URLSession: `uploadTask(with:fromFile:)` on the spool
/// copy, which FoundationNetworking reads in bounded chunks and sends with `Content-Length`
/// (a body stream would be faster but is sent chunked, which S3-style servers refuse). The
/// decisions are `UploadAttempt`'s; callbacks arrive through `SessionDelegate`.
///
/// `@unchecked Sendable`: `session` is set once right after init, before any task exists;
/// everything else is immutable or locked.
final class UploadRunner: @unchecked Sendable {
    private struct State {
        var byJob: [String: UploadContext] = [:]
        var starting: Set<String> = []
        /// Jobs stopped or cancelled while starting, and why: they will not send.
        var cancelledBeforeStart: [String: StopReason] = [:]
        var stoppingAll = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var isIdle: Bool { byJob.isEmpty && starting.isEmpty }
    }

    let configuration: EngineConfiguration
    let hosts: HostGuard
    /// The bandwidth limits: a resumable upload's appends are paced to them.
    let rates: RateGovernor
    let queues: EngineQueues
    let events: AsyncStream<EngineEvent>.Continuation
    weak var session: URLSession?
    /// The engine's table of running tasks, shared with downloads.
    let tasks: EngineTasks
    private let state = Mutex(State())

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
        state.withLock { _ = $0.starting.insert(request.jobID) }
        queues.onIO {
            var found = TransferPreparation.hostFailure(for: request.url, hosts: self.hosts)
            var info = stat()
            if found == nil, stat(plan.spoolPath, &info) != 0 || Int64(info.st_size) != plan.size {
                found = .permanent(
                    JobError(code: .disk, message: "the spool copy of the file (\(plan.spoolPath)) is missing or damaged: hand the file over again"))
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
        enum Start { case stop(StopReason), refuse(TransferFailure), run(UploadContext) }
        let decision: Start = state.withLock { state in
            state.starting.remove(jobID)
            if let reason = state.cancelledBeforeStart.removeValue(forKey: jobID) { return .stop(reason) }
            if state.stoppingAll { return .stop(.shutdown) }
            if let refusal { return .refuse(refusal) }
            let context = UploadContext(request: request, plan: plan, attempt: UploadAttempt(settings: settings), queues: queues)
            state.byJob[jobID] = context
            return .run(context)
        }
        switch decision {
        case .stop(let reason):
            rates.leave(jobID)
            events.yield(.stopped(jobID: jobID, bytes: 0, reason: reason))
            releaseStopWaitersIfIdle()
        case .refuse(let failure):
            rates.leave(jobID)
            events.yield(
                failure.retryable
                    ? .interrupted(jobID: jobID, error: failure.error, kept: Self.nothingKept(plan), retryAfter: nil)
                    : .failed(jobID: jobID, error: failure.error))
            releaseStopWaitersIfIdle()
        case .run(let context):
            perform(context.attempt.proceed(), context)
        }
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
        guard let context = claim(jobID, for: .cancel) else { return nil }
        _ = context?.stop(as: .cancelling)
        return .cancelled
    }

    /// The running upload `jobID` (nil inside: it is still starting, and now will not send);
    /// nil when this runner does not know the job. A job stopped before it began is reported as
    /// `.stopped`.
    private func claim(_ jobID: String, for reason: StopReason) -> UploadContext?? {
        state.withLock { state in
            if state.starting.contains(jobID) {
                state.cancelledBeforeStart[jobID] = reason
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) }
        }
    }

    /// Stops one upload (a pause); nil when the job is not an upload this runner knows. A plain
    /// upload keeps nothing: it is sent from byte 0 when resumed; a resumable one continues from
    /// the offset the server reports.
    func stop(jobID: String, reason: StopReason) -> StopOutcome? {
        guard let context = claim(jobID, for: reason) else { return nil }
        guard let context else { return .stopping }
        return context.stop(as: .stopping(reason)) ? .stopping : .notRunning
    }

    func stopAll() async {
        let running: [UploadContext] = state.withLock { state in
            state.stoppingAll = true
            return Array(state.byJob.values)
        }
        for context in running { _ = context.stop(as: .stopping(.shutdown)) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.isIdle { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func progress(jobID: String) -> TransferProgress? {
        guard let context = state.withLock({ $0.byJob[jobID] }) else { return nil }
        var progress = context.progress
        progress.pacedRate = rates.rate(for: jobID)
        // A plain upload is one request: nothing to pace between.
        progress.limitUnheld = progress.pacedRate != nil && context.sendsWholeFile.load(ordering: .relaxed)
        return progress
    }

    // MARK: - Carrying out decisions (delegate queue)

    @discardableResult
    func perform(_ actions: [UploadAttempt.Action], _ context: UploadContext) -> URLSession.ResponseDisposition {
        queues.assertOnDelegate()
        var disposition = URLSession.ResponseDisposition.cancel
        let jobID = context.request.jobID
        for action in actions {
            switch action {
            case .send(let request):
                send(request, context)
            case .record(let protocolUsed, let resource, let offset):
                events.yield(.uploadProgressed(jobID: jobID, protocolUsed: protocolUsed, resource: resource?.absoluteString, offset: offset))
            case .acceptBody:
                disposition = .allow
            case .cancelRequest:
                disposition = .cancel
            case .complete(let response):
                context.request.logger.info("upload accepted", metadata: ["status": "\(response.status)"])
                end(context, .uploaded(jobID: jobID, bytes: context.plan.size, response: response))
            case .retryLater(let failure):
                context.request.logger.info("upload interrupted", metadata: ["error": "\(failure.error.message)"])
                end(context, .interrupted(jobID: jobID, error: failure.error, kept: Self.kept(context), retryAfter: failure.retryAfter))
            case .fail(let error):
                context.request.logger.warning("upload failed", metadata: ["error": "\(error.message)"])
                end(context, .failed(jobID: jobID, error: error))
            }
        }
        return disposition
    }

    /// A plain upload keeps nothing for its next attempt: it sends the file from byte 0 again.
    static func nothingKept(_ plan: UploadPlan) -> StoppedTransfer {
        StoppedTransfer(bytes: 0, validator: nil, totalBytes: plan.size)
    }

    /// What the next attempt starts from: a resumable upload's bytes the server holds.
    static func kept(_ context: UploadContext) -> StoppedTransfer {
        StoppedTransfer(bytes: context.attempt.keptBytes, validator: nil, totalBytes: context.plan.size)
    }

    /// Sends one request of the upload, its URL admitted by the host rules (`send`, in
    /// `UploadRunner+Hosts.swift`, checks first). A segment of the file is read on the I/O queue first,
    /// into one bounded `Data`: FoundationNetworking sends it with `Content-Length`, and never
    /// reads the file itself after the request ended.
    func sendAdmitted(_ request: UploadAttempt.Request, _ context: UploadContext) {
        guard case .range(let range) = request.body else {
            if request.body == .wholeFile { context.sendsWholeFile.store(true, ordering: .relaxed) }
            begin(request, body: nil, context)
            return
        }
        // An append waits until the bytes sent so far fit the job's rate limit.
        let now = MonotonicClock.nanoseconds()
        let wait = context.pacer.delay(endedAt: range.lowerBound, now: now, rate: rates.rate(for: context.request.jobID))
        if wait > 0 {
            appendWhenPaced(request, range, context, at: now + wait)
            return
        }
        context.pacer.requestSent(at: now, offset: range.lowerBound)
        let path = context.plan.spoolPath
        queues.onIO {
            let body = Result { () throws(CoreError) -> Data in try Self.read(range, of: path) }
            self.queues.onDelegate {
                switch body {
                case .success(let data):
                    self.begin(request, body: data, context)
                case .failure(let error):
                    self.perform([.fail(JobError(code: .disk, message: error.message))], context)
                }
            }
        }
    }

    /// Waits until `due` on the monotonic clock, then sends the append. One timer is armed for
    /// `due`; a stop (`UploadContext.stop`) and a changed rate limit wake the upload earlier, and it
    /// looks again: a lifted limit sends at once, a raised one brings `due` forward.
    private func appendWhenPaced(_ request: UploadAttempt.Request, _ range: Range<Int64>, _ context: UploadContext, at due: UInt64) {
        queues.assertOnDelegate()
        guard context.phase == .active else {
            endInactive(context)
            return
        }
        let rate = rates.rate(for: context.request.jobID)
        let due = context.pacer.due(due, at: rate)
        let now = MonotonicClock.nanoseconds()
        guard now < due, rate != nil else {
            context.pacer.requestSent(at: now, offset: range.lowerBound)
            sendAdmitted(request, context)
            return
        }
        context.wakeup.park(.paced, until: rates.recheckTime(due: due, now: now)) {
            self.appendWhenPaced(request, range, context, at: due)
        }
    }

    /// Wakes the uploads that wait for their pace, to look at their rate again.
    func ratesChanged() {
        for context in running { context.wakeup.wake([.paced]) }
    }

    private func begin(_ request: UploadAttempt.Request, body: Data?, _ context: UploadContext) {
        queues.assertOnDelegate()
        guard let session else {
            endInactive(context)
            return
        }
        let urlRequest = Self.urlRequest(request, for: context)
        let task: URLSessionTask
        switch request.body {
        case .none: task = session.dataTask(with: urlRequest)
        case .wholeFile: task = session.uploadTask(with: urlRequest, fromFile: URL(fileURLWithPath: context.plan.spoolPath))
        case .range: task = session.uploadTask(with: urlRequest, from: body ?? Data())
        }
        task.taskDescription = context.request.jobID
        context.beginRequest(at: context.attempt.progressBase)
        tasks.register(task.taskIdentifier, .upload(context))
        let sent: Bool = context.control.withLock { control in
            guard control.phase == .active else { return false }
            control.task = task
            task.resume()
            return true
        }
        if !sent {
            _ = tasks.unregister(task.taskIdentifier)
            endInactive(context)
        }
    }

    /// A request of the upload: the job's headers, then the request's own (method, Content-Type,
    /// digests, the resumable protocol's fields). FoundationNetworking adds Content-Length from
    /// the body's size.
    static func urlRequest(_ request: UploadAttempt.Request, for context: UploadContext) -> URLRequest {
        let headers = credentials(context.request.headers, for: request.url, jobURL: context.request.url)
        var urlRequest = urlRequest(request, headers: headers, idleTimeout: context.request.limits.idleTimeout)
        if request.body == .wholeFile, urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
            urlRequest.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        }
        if let pem = context.request.cacert { Trust.add(pem, to: &urlRequest, job: context.request.jobID) }
        return urlRequest
    }

    /// `request` with the job's own `headers` under the protocol's.
    static func urlRequest(_ request: UploadAttempt.Request, headers: [String: String], idleTimeout: Double) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = HTTPScheme.timeout(idleTimeout)
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
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

    /// Ends an upload that left the active phase between or during requests: stopped (a pause, a
    /// cancel, shutdown), or failed by a limit the engine enforces.
    func endInactive(_ context: UploadContext) {
        if case .failing(let failure) = context.phase {
            perform([failure.retryable ? .retryLater(failure) : .fail(failure.error)], context)
            return
        }
        let reason: StopReason
        switch context.phase {
        case .stopping(let why): reason = why
        case .cancelling: reason = .cancel
        case .active, .failing: reason = .shutdown
        }
        end(context, .stopped(jobID: context.request.jobID, bytes: context.attempt.keptBytes, reason: reason))
    }

    /// The uploads running now.
    var running: [UploadContext] { state.withLock { Array($0.byJob.values) } }

    /// Reports how the upload ended and forgets it.
    func end(_ context: UploadContext, _ event: EngineEvent) {
        rates.leave(context.request.jobID)
        events.yield(event)
        state.withLock { _ = $0.byJob.removeValue(forKey: context.request.jobID) }
        releaseStopWaitersIfIdle()
    }

    private func releaseStopWaitersIfIdle() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            guard state.isIdle else { return [] }
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        waiters.forEach { $0.resume() }
    }
}
