public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization
public import TransferProtocol

/// One transfer of a ``TransferSession``: a daemon job, seen as `URLSessionTask` shows a task.
///
/// Created by the session (`downloadTask(with:)`, `uploadTask(with:fromFile:)`) and handed to
/// the daemon by ``resume()``; after a relaunch, ``TransferSession/allTasks`` and the delegate
/// give the tasks of earlier processes, with the same ``taskIdentifier``.
public class TransferTask: @unchecked Sendable {
    // @unchecked: every mutable property lives in `state`, behind its mutex; the rest is set in init.

    /// Where a task is, as `URLSessionTask.State`.
    public enum State: Int, Sendable {
        case running
        case suspended
        case canceling
        case completed
    }

    struct Snapshot {
        var state: State = .suspended
        var submitted = false
        var taskDescription: String?
        var earliestBeginDate: Date?
        var job: Job?
        var error: (any Error)?
        var lastProgressBytes: Int64 = 0
    }

    /// The daemon job's id (chosen by the library when it creates the task).
    public let jobID: String
    /// A number for the task, the same in every process that sees it (derived from ``jobID``).
    public let taskIdentifier: Int
    /// The request the task was created with (rebuilt from the job after a relaunch).
    public let originalRequest: URLRequest?
    let snapshot: Mutex<Snapshot>
    weak var session: TransferSession?
    /// The async API's delegate for this task, if any.
    let taskDelegate: (any TransferSessionTaskDelegate)?

    init(jobID: String, request: URLRequest?, session: TransferSession?, taskDelegate: (any TransferSessionTaskDelegate)? = nil, job: Job? = nil) {
        self.jobID = jobID
        self.taskIdentifier = Self.identifier(of: jobID)
        self.originalRequest = request
        self.session = session
        self.taskDelegate = taskDelegate
        var snapshot = Snapshot()
        if let job {
            snapshot.job = job
            snapshot.submitted = true
            snapshot.taskDescription = job.label
            snapshot.state = Self.state(of: job)
        }
        self.snapshot = Mutex(snapshot)
    }

    /// Free text kept with the task by the daemon across relaunches (its job's `label`). Set it
    /// before ``resume()``.
    public var taskDescription: String? {
        get { snapshot.withLock { $0.taskDescription } }
        set { snapshot.withLock { $0.taskDescription = newValue } }
    }

    /// Not started before this time (the job's `not_before`). Set it before ``resume()``.
    public var earliestBeginDate: Date? {
        get { snapshot.withLock { $0.earliestBeginDate } }
        set { snapshot.withLock { $0.earliestBeginDate = newValue } }
    }

    public var state: State { snapshot.withLock { $0.state } }
    /// The daemon's view of the job, as last heard.
    public var job: Job? { snapshot.withLock { $0.job } }
    /// Why the task ended without completing: a ``TransferError``.
    public var error: (any Error)? { snapshot.withLock { $0.error } }

    public var countOfBytesReceived: Int64 { job.map { $0.kind == .upload ? 0 : $0.bytesReceived } ?? 0 }
    public var countOfBytesSent: Int64 { job?.bytesSent ?? 0 }
    /// The size the server announced (`-1` until known), as `NSURLSessionTransferSizeUnknown`.
    public var countOfBytesExpectedToReceive: Int64 { job.flatMap { $0.kind == .upload ? nil : $0.totalBytes } ?? -1 }
    public var countOfBytesExpectedToSend: Int64 { job.flatMap { $0.kind == .upload ? $0.totalBytes : nil } ?? 0 }

    /// The server's answer, built from what the daemon kept: for an upload its status, `Location`,
    /// `ETag` and `Content-Type`; for a completed download `200` and the URL it came from.
    public var response: URLResponse? {
        guard let job else { return nil }
        if let answer = job.response {
            var fields: [String: String] = [:]
            fields["Location"] = answer.location
            fields["ETag"] = answer.etag
            fields["Content-Type"] = answer.contentType
            return HTTPURLResponse(url: URL(string: job.url) ?? Self.placeholder, statusCode: answer.status, httpVersion: "HTTP/1.1", headerFields: fields)
        }
        guard job.state == .completed else { return nil }
        let url = URL(string: job.finalUrl ?? job.url) ?? Self.placeholder
        return HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])
    }

    /// ``response``, or a bare one for the task's URL.
    var completedResponse: URLResponse {
        response ?? URLResponse(url: originalRequest?.url ?? Self.placeholder, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
    }

    /// Hands the task to the daemon (the first time), or resumes it after ``suspend()``.
    public func resume() {
        session?.resume(self)
    }

    /// Holds the task where it is (the daemon's `pause`): a download keeps its bytes.
    public func suspend() {
        session?.suspend(self)
    }

    /// Cancels the task: the delegate hears `didCompleteWithError` with a ``TransferError`` of
    /// code ``TransferError/Code/cancelled``.
    public func cancel() {
        session?.cancel(self)
    }

    func update(with job: Job) {
        snapshot.withLock { snapshot in
            snapshot.job = job
            snapshot.submitted = true
            if snapshot.state != .canceling || job.state.isTerminal { snapshot.state = Self.state(of: job) }
        }
    }

    static func state(of job: Job) -> State {
        if job.state.isTerminal { return .completed }
        return job.paused == true ? .suspended : .running
    }

    /// A stable number from a job id: the id's hexadecimal part, else a hash that does not change
    /// between processes (FNV-1a).
    static func identifier(of jobID: String) -> Int {
        let hex = jobID.split(separator: "-").last.map(String.init) ?? jobID
        if hex.count <= 16, let value = UInt64(hex, radix: 16) { return Int(value & UInt64(Int.max)) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in jobID.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash & UInt64(Int.max))
    }

    private static let placeholder = URL(fileURLWithPath: "/")
}

/// A download: `URLSessionDownloadTask`'s counterpart.
public final class TransferDownloadTask: TransferTask, @unchecked Sendable {
    /// Where the file lands; `nil` for a task created without a destination, whose file goes to
    /// the session's download directory and is handed to the delegate.
    public let destination: URL?

    init(jobID: String, request: URLRequest?, destination: URL?, session: TransferSession?, taskDelegate: (any TransferSessionTaskDelegate)? = nil, job: Job? = nil) {
        self.destination = destination
        super.init(jobID: jobID, request: request, session: session, taskDelegate: taskDelegate, job: job)
    }
}

/// An upload of a file: `URLSessionUploadTask`'s counterpart.
public final class TransferUploadTask: TransferTask, @unchecked Sendable {
    /// The file sent.
    public let fileURL: URL?

    init(jobID: String, request: URLRequest?, fileURL: URL?, session: TransferSession?, taskDelegate: (any TransferSessionTaskDelegate)? = nil, job: Job? = nil) {
        self.fileURL = fileURL
        super.init(jobID: jobID, request: request, session: session, taskDelegate: taskDelegate, job: job)
    }

    /// The body of the server's answer, as far as the daemon kept it (`upload_response_body_bytes`).
    public var responseBody: Data? {
        guard let answer = job?.response, let body = answer.body else { return nil }
        return answer.bodyEncoding == "base64" ? Data(base64Encoded: body) : Data(body.utf8)
    }
}
