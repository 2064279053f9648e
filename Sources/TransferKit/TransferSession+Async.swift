public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization
import TransferProtocol

/// The async API, as `URLSession`'s: each call hands one task to the daemon and returns when it
/// ends. Cancelling the Swift `Task` that awaits cancels the daemon's job.
extension TransferSession {
    /// Downloads `url` into the session's download directory and returns where the file is and
    /// the response. The file stays until you move or delete it.
    public func download(from url: URL, delegate: (any TransferSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        try await download(for: URLRequest(url: url), delegate: delegate)
    }

    /// Downloads `request` into the session's download directory (see ``download(from:delegate:)``).
    public func download(for request: URLRequest, delegate: (any TransferSessionTaskDelegate)? = nil) async throws -> (URL, URLResponse) {
        let task = register(TransferDownloadTask(jobID: Self.newJobID(), request: request, destination: nil, session: self, taskDelegate: delegate))
        let ending = try await run(task)
        return (ending.file ?? URL(fileURLWithPath: ending.job.destination), task.completedResponse)
    }

    /// Uploads `fileURL` with `request`'s URL, method and headers; returns the body of the
    /// server's answer (as far as the daemon kept it) and the response.
    public func upload(for request: URLRequest, fromFile fileURL: URL, delegate: (any TransferSessionTaskDelegate)? = nil) async throws -> (Data, URLResponse) {
        let task = register(TransferUploadTask(jobID: Self.newJobID(), request: request, fileURL: fileURL, session: self, taskDelegate: delegate))
        _ = try await run(task)
        return (task.responseBody ?? Data(), task.completedResponse)
    }

    /// Resumes `task` and waits for its end: the job, if it completed.
    private func run(_ task: TransferTask) async throws -> Ending {
        let ending: Ending = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.withLock { $0.waiters[task.jobID] = continuation }
                task.resume()
            }
        } onCancel: {
            task.cancel()
        }
        guard ending.job.state == .completed else { throw TransferError(ending: ending.job) }
        return ending
    }
}
