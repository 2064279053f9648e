import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TransferProtocol

/// Listening: one thread follows the session's events (`subscribe` with the identifier as the
/// session), reconnecting whenever the daemon goes away, and delivers them on the delegate
/// queue. An end is acknowledged (`ack`) only after its delegate call returned.
extension TransferSession {
    func startListening() {
        let thread = Thread { [self] in listen() }
        thread.name = "transferkit.events.\(configuration.identifier)"
        thread.start()
    }

    private var isInvalidated: Bool { state.withLock { $0.invalidated } }

    private func listen() {
        let policy = ReconnectPolicy()
        var attempt = 0
        var announced = false
        while !isInvalidated {
            do throws(ControlClientError) {
                let client = try ControlClient(socketPath: requests.socketPath)
                let connection = ListenerConnection(client)
                let invalidated = state.withLock { state in
                    state.listener = connection
                    return state.invalidated
                }
                if invalidated { return }
                _ = try client.call(Subscribe.self, .init(session: configuration.identifier))
                attempt = 0
                while true {
                    let (method, line) = try client.readNotification()
                    if method == NotificationMethod.event {
                        handle(try client.params(JobEvent.self, of: line))
                    } else if method == NotificationMethod.caughtUp, !announced {
                        announced = true
                        deliverAndWait { $0.transferSessionDidFinishEvents(forBackgroundSession: self) }
                    } else if method == NotificationMethod.disconnect {
                        break
                    }
                }
            } catch {
                // The daemon stopped or restarted: subscribe again, which replays the ends not
                // yet acknowledged. Progress missed meanwhile is not replayed.
            }
            if isInvalidated { return }
            Thread.sleep(forTimeInterval: policy.delay(attempt: attempt))
            attempt += 1
        }
    }

    private func handle(_ event: JobEvent) {
        let task = task(for: event.job)
        if !event.type.isTerminal {
            let before = task.snapshot.withLock { $0.lastProgressBytes }
            task.update(with: event.job)
            if event.type == .progress || event.type == .started { reportProgress(task, from: before, job: event.job) }
            return
        }
        // Without a delegate, only the ends this process waits for are taken: the others stay
        // with the daemon for a process that listens.
        let awaited = state.withLock { $0.waiters[event.job.id] != nil || $0.endHandlers[event.job.id] != nil }
        if delegate == nil, !awaited {
            task.update(with: event.job)
            return
        }
        let repeated = state.withLock { !$0.delivered.insert(event.seq).inserted }
        if !repeated {
            task.update(with: event.job)
            if event.job.state != .completed {
                task.snapshot.withLock { $0.error = TransferError(ending: event.job) }
            }
            deliverEnd(of: task, job: event.job)
        }
        _ = try? requests.call(Ack.self, .init(session: configuration.identifier, seq: event.seq))
    }

    private func reportProgress(_ task: TransferTask, from before: Int64, job: Job) {
        let upload = job.kind == .upload
        let total = upload ? (job.bytesSent ?? 0) : job.bytesReceived
        guard total != before else { return }
        task.snapshot.withLock { $0.lastProgressBytes = total }
        let expected = job.totalBytes ?? -1
        let delta = max(0, total - before)
        let delegate = self.delegate
        let taskDelegate = task.taskDelegate
        delegateQueue.addOperation {
            if upload {
                delegate?.transferSession(self, task: task, didSendBodyData: delta, totalBytesSent: total, totalBytesExpectedToSend: expected)
                taskDelegate?.transferSession(self, task: task, didSendBodyData: delta, totalBytesSent: total, totalBytesExpectedToSend: expected)
            } else if let download = task as? TransferDownloadTask {
                delegate?.transferSession(self, downloadTask: download, didWriteData: delta, totalBytesWritten: total, totalBytesExpectedToWrite: expected)
                taskDelegate?.transferSession(self, downloadTask: download, didWriteData: delta, totalBytesWritten: total, totalBytesExpectedToWrite: expected)
            }
        }
    }

    /// Delivers a task's end and returns once it has been handled: to the async call waiting
    /// for it, else to the delegate (the file first, then the completion). A file the session's
    /// download directory holds is deleted once the delegate returned, as on iOS.
    private func deliverEnd(of task: TransferTask, job: Job) {
        if let waiter = state.withLock({ $0.waiters.removeValue(forKey: task.jobID) }) {
            if job.state == .completed, job.inbox == true {
                do throws(TransferError) {
                    waiter.resume(returning: Ending(job: job, file: try takeInboxFile(of: job)))
                } catch {
                    waiter.resume(throwing: error)
                }
            } else {
                waiter.resume(returning: Ending(job: job, file: nil))
            }
            ended(task)
            return
        }
        var error = job.state == .completed ? nil : TransferError(ending: job)
        var file: (url: URL, isCopy: Bool)?
        if job.state == .completed, task is TransferDownloadTask {
            do throws(TransferError) {
                file = job.inbox == true ? try inboxFile(of: job) : (URL(fileURLWithPath: job.destination), false)
            } catch let failure {
                error = failure
            }
        }
        let reported = error
        let handedOver = file
        deliverAndWait { delegate in
            if let file = handedOver, let download = task as? TransferDownloadTask {
                delegate.transferSession(self, downloadTask: download, didFinishDownloadingTo: file.url)
                if file.isCopy { try? FileManager.default.removeItem(at: file.url) }
            }
            delegate.transferSession(self, task: task, didCompleteWithError: reported)
        }
        ended(task)
    }

    /// Runs `call` with the delegate on the delegate queue and waits until it returned.
    private func deliverAndWait(_ call: @escaping @Sendable (any TransferSessionDelegate) -> Void) {
        guard let delegate else { return }
        let operation = BlockOperation { call(delegate) }
        delegateQueue.addOperations([operation], waitUntilFinished: true)
    }
}
