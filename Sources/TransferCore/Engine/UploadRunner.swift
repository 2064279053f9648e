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
        var byTask: [Int: UploadContext] = [:]
        var starting: Set<String> = []
        var cancelledBeforeStart: Set<String> = []
        var stoppingAll = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var isIdle: Bool { byJob.isEmpty && starting.isEmpty }
    }

    let configuration: EngineConfiguration
    let hosts: HostGuard
    let queues: EngineQueues
    let events: AsyncStream<EngineEvent>.Continuation
    weak var session: URLSession?
    private let state = Mutex(State())

    init(configuration: EngineConfiguration, hosts: HostGuard, queues: EngineQueues, events: AsyncStream<EngineEvent>.Continuation) {
        self.configuration = configuration
        self.hosts = hosts
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
        let settings = UploadAttempt.Settings(url: request.url, size: plan.size, bodyLimit: configuration.uploadResponseBodyBytes)
        enum Start { case stop, refuse(TransferFailure), run(UploadContext) }
        let decision: Start = state.withLock { state in
            state.starting.remove(jobID)
            if state.cancelledBeforeStart.remove(jobID) != nil || state.stoppingAll { return .stop }
            if let refusal { return .refuse(refusal) }
            let context = UploadContext(request: request, plan: plan, attempt: UploadAttempt(settings: settings))
            state.byJob[jobID] = context
            return .run(context)
        }
        switch decision {
        case .stop:
            events.yield(.stopped(jobID: jobID, bytes: 0))
            releaseStopWaitersIfIdle()
        case .refuse(let failure):
            events.yield(
                failure.retryable
                    ? .interrupted(jobID: jobID, error: failure.error, kept: Self.nothingKept(plan), retryAfter: nil)
                    : .failed(jobID: jobID, error: failure.error))
            releaseStopWaitersIfIdle()
        case .run(let context):
            perform(context.attempt.proceed(), context)
        }
    }

    /// nil when the job is not an upload this runner knows.
    func cancel(jobID: String) -> CancelOutcome? {
        let context: UploadContext?? = state.withLock { state in
            if state.starting.contains(jobID) {
                state.cancelledBeforeStart.insert(jobID)
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) }
        }
        guard let context else { return nil }
        _ = context?.stop(as: .cancelling)
        return .cancelled
    }

    /// Stops one upload (a pause); nil when the job is not an upload this runner knows. A plain
    /// upload keeps nothing: it is sent from byte 0 when resumed.
    func stop(jobID: String) -> StopOutcome? {
        let context: UploadContext?? = state.withLock { state in
            if state.starting.contains(jobID) {
                // Stopped before it began: reported as `.stopped`, like a cancel at that point.
                state.cancelledBeforeStart.insert(jobID)
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) }
        }
        guard let context else { return nil }
        guard let context else { return .stopping }
        return context.stop(as: .stopping) ? .stopping : .notRunning
    }

    func stopAll() async {
        let running: [UploadContext] = state.withLock { state in
            state.stoppingAll = true
            return Array(state.byJob.values)
        }
        for context in running { _ = context.stop(as: .stopping) }
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
        state.withLock { $0.byJob[jobID] }?.progress
    }

    func context(forTask task: Int) -> UploadContext? {
        state.withLock { $0.byTask[task] }
    }

    // MARK: - Carrying out decisions (delegate queue)

    @discardableResult
    func perform(_ actions: [UploadAttempt.Action], _ context: UploadContext) -> URLSession.ResponseDisposition {
        queues.assertOnDelegate()
        var disposition = URLSession.ResponseDisposition.cancel
        let jobID = context.request.jobID
        for action in actions {
            switch action {
            case .send:
                send(context)
            case .acceptBody:
                disposition = .allow
            case .cancelRequest:
                disposition = .cancel
            case .complete(let response):
                context.request.logger.info("upload accepted", metadata: ["status": "\(response.status)"])
                end(context, .uploaded(jobID: jobID, bytes: context.plan.size, response: response))
            case .retryLater(let failure):
                context.request.logger.info("upload interrupted", metadata: ["error": "\(failure.error.message)"])
                end(context, .interrupted(jobID: jobID, error: failure.error, kept: Self.nothingKept(context.plan), retryAfter: failure.retryAfter))
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

    private func send(_ context: UploadContext) {
        guard let session else {
            end(context, .stopped(jobID: context.request.jobID, bytes: 0))
            return
        }
        let task = session.uploadTask(with: Self.request(for: context), fromFile: URL(fileURLWithPath: context.plan.spoolPath))
        task.taskDescription = context.request.jobID
        state.withLock { $0.byTask[task.taskIdentifier] = context }
        let sent: Bool = context.control.withLock { control in
            guard control.phase == .active else { return false }
            control.task = task
            task.resume()
            return true
        }
        if !sent {
            _ = state.withLock { $0.byTask.removeValue(forKey: task.taskIdentifier) }
            end(context, .stopped(jobID: context.request.jobID, bytes: 0))
        }
    }

    /// The request of an attempt: the job's headers, the method, Content-Type and Content-Digest.
    /// FoundationNetworking adds Content-Length from the file's size.
    static func request(for context: UploadContext) -> URLRequest {
        var request = URLRequest(url: context.request.url)
        request.httpMethod = context.plan.method
        request.timeoutInterval = HTTPScheme.timeout(context.request.limits.idleTimeout)
        for (name, value) in context.request.headers { request.setValue(value, forHTTPHeaderField: name) }
        if let type = context.plan.contentType { request.setValue(type, forHTTPHeaderField: "Content-Type") }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        }
        request.setValue(context.plan.contentDigest, forHTTPHeaderField: "Content-Digest")
        return request
    }

    /// Reports how the upload ended and forgets it.
    func end(_ context: UploadContext, _ event: EngineEvent) {
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

    func unregister(task: Int) -> UploadContext? {
        state.withLock { $0.byTask.removeValue(forKey: task) }
    }
}
