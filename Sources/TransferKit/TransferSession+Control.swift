import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TransferProtocol

/// Handing tasks to the daemon and steering them: `resume`, `suspend`, `cancel`.
extension TransferSession {
    func resume(_ task: TransferTask) {
        let first: Bool = task.snapshot.withLock { snapshot in
            guard snapshot.state == .suspended else { return false }
            let first = !snapshot.submitted
            snapshot.state = .running
            snapshot.submitted = true
            return first
        }
        work.async {
            do throws(TransferError) {
                if first {
                    task.update(with: try self.submit(task))
                } else if let job = try self.requests.call(Resume.self, .init(ids: [task.jobID])).jobs.first {
                    task.update(with: job)
                }
            } catch {
                if first { self.failBeforeStart(task, error) }
            }
        }
    }

    func suspend(_ task: TransferTask) {
        let submitted = task.snapshot.withLock { snapshot in
            if snapshot.state == .running { snapshot.state = .suspended }
            return snapshot.submitted
        }
        guard submitted else { return }
        work.async {
            if let job = try? self.requests.call(Pause.self, .init(ids: [task.jobID])).jobs.first { task.update(with: job) }
        }
    }

    func cancel(_ task: TransferTask) {
        let submitted: Bool = task.snapshot.withLock { snapshot in
            guard snapshot.state != .completed else { return true }
            snapshot.state = .canceling
            return snapshot.submitted
        }
        guard submitted else {
            failBeforeStart(task, TransferError(code: .cancelled, message: "the task was cancelled"))
            return
        }
        work.async {
            // The end arrives as the job's `cancelled` event, delivered as every end is.
            _ = try? self.requests.call(Cancel.self, .init(id: task.jobID))
        }
    }

    /// Submits `task`'s job; an upload's file is handed over first.
    private func submit(_ task: TransferTask) throws(TransferError) -> Job {
        guard let request = task.originalRequest, let url = request.url else {
            throw TransferError(code: .refused, message: "the task's request has no URL")
        }
        var headers = configuration.httpAdditionalHeaders ?? [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            headers = headers.filter { $0.key.lowercased() != name.lowercased() }
            headers[name] = value
        }
        var params = Submit.Params(url: url.absoluteString, destination: nil, id: task.jobID, session: configuration.identifier)
        params.label = task.taskDescription
        params.notBefore = task.earliestBeginDate
        var limits = RetryLimits()
        limits.maxTimeSeconds = configuration.timeoutIntervalForResource
        limits.idleTimeoutSeconds = configuration.timeoutIntervalForRequest
        params.retry = limits.isEmpty ? nil : limits
        if let upload = task as? TransferUploadTask {
            guard let file = upload.fileURL else { throw TransferError(code: .refused, message: "the upload task has no file") }
            let method = (request.httpMethod ?? "PUT").uppercased()
            guard UploadMethod(rawValue: method) != nil else {
                throw TransferError(code: .refused, message: "an upload is sent with PUT, POST or PATCH, not \(method): set the request's httpMethod")
            }
            if let type = headers.first(where: { $0.key.lowercased() == "content-type" }) {
                params.contentType = type.value
                headers[type.key] = nil
            }
            let reply = try FileHandoff.spool(file, controlSocket: requests.socketPath)
            params.kind = JobKind.upload.rawValue
            params.source = file.path
            params.spool = reply.spool
            params.method = method
            params.resumable = configuration.uploadResumable
        } else if let download = task as? TransferDownloadTask {
            if let destination = download.destination {
                params.destination = destination.path
                params.overwrite = configuration.overwritesDestinations ? true : nil
            }
            // Without a destination, the daemon's inbox keeps the file until the end is acknowledged.
        }
        params.headers = headers.isEmpty ? nil : headers
        return try requests.call(Submit.self, params).job
    }

    /// Ends a task the daemon never accepted: its waiter or the delegate hears why.
    func failBeforeStart(_ task: TransferTask, _ error: TransferError) {
        task.snapshot.withLock { snapshot in
            snapshot.state = .completed
            snapshot.error = error
        }
        let waiter = state.withLock { $0.waiters.removeValue(forKey: task.jobID) }
        if let waiter {
            waiter.resume(throwing: error)
            return
        }
        delegateQueue.addOperation {
            self.delegate?.transferSession(self, task: task, didCompleteWithError: error)
            self.ended(task)
        }
    }

    /// Runs what waits for `task`'s end (a ``TransferOperation``).
    func ended(_ task: TransferTask) {
        let handlers = state.withLock { $0.endHandlers.removeValue(forKey: task.jobID) } ?? []
        for handler in handlers { handler(task) }
    }

    /// Calls `handler` once `task` has ended and its end was delivered (at once if it has).
    func whenEnded(_ task: TransferTask, _ handler: @escaping @Sendable (TransferTask) -> Void) {
        let now: Bool = state.withLock { state in
            if task.state == .completed { return true }
            state.endHandlers[task.jobID, default: []].append(handler)
            return false
        }
        if now { handler(task) }
    }
}
