public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif
import Synchronization
import TransferProtocol

/// A background transfer session served by transferd: `URLSession` with a background
/// configuration, on Linux.
///
/// The daemon does the transfers. This process may exit or crash at any time: a later process
/// that creates a session with the same identifier gets a delegate call for every task that ended
/// meanwhile, in order, then ``TransferSessionDelegate/transferSessionDidFinishEvents(forBackgroundSession:)``,
/// then live calls. Each end is acknowledged to the daemon only after the delegate method
/// returned, so a process killed inside one gets it again.
///
/// ```swift
/// let session = TransferSession(configuration: .background(withIdentifier: "com.example.feed"), delegate: feed, delegateQueue: nil)
/// let task = session.downloadTask(with: coverURL)
/// task.taskDescription = "cover.jpg"
/// task.resume()
/// ```
public final class TransferSession: Sendable {
    struct State {
        var tasks: [String: TransferTask] = [:]
        /// Async API calls waiting for their task's end, by job id.
        var waiters: [String: CheckedContinuation<Ending, any Error>] = [:]
        /// Called once a task has ended and its end was delivered (``TransferOperation``).
        var endHandlers: [String: [@Sendable (TransferTask) -> Void]] = [:]
        /// Terminal events delivered in this process, by seq (a replay after a reconnect repeats them).
        var delivered: Set<UInt64> = []
        var invalidated = false
        var listener: ListenerConnection?
    }

    public let configuration: TransferSessionConfiguration
    /// The delegate, held until the session is invalidated, as `URLSession` holds its own.
    public let delegate: (any TransferSessionDelegate)?
    /// Where the delegate is called: the queue given, or a serial queue of the session's.
    public let delegateQueue: OperationQueue
    /// A description for logs and debugging.
    public var sessionDescription: String? {
        get { descriptionText.withLock { $0 } }
        set { descriptionText.withLock { $0 = newValue } }
    }

    let state = Mutex(State())
    let requests: RequestChannel
    let work = DispatchQueue(label: "transferkit.requests")
    private let descriptionText = Mutex<String?>(nil)

    /// Creates the session and starts listening for its events: the ends that came while no
    /// process listened are delivered first.
    public init(configuration: TransferSessionConfiguration, delegate: (any TransferSessionDelegate)?, delegateQueue: OperationQueue?) {
        self.configuration = configuration
        self.delegate = delegate
        let queue = delegateQueue ?? OperationQueue()
        if delegateQueue == nil {
            queue.maxConcurrentOperationCount = 1
            queue.name = "transferkit.delegate.\(configuration.identifier)"
        }
        self.delegateQueue = queue
        self.requests = RequestChannel(socketPath: configuration.resolvedSocketPath())
        startListening()
    }

    /// The control socket the session talks to.
    public var socketPath: String { requests.socketPath }

    // MARK: - Tasks

    /// A download of `url` into the session's download directory, handed to the delegate when it
    /// lands (`didFinishDownloadingTo`). Call ``TransferTask/resume()`` to start it.
    public func downloadTask(with url: URL) -> TransferDownloadTask {
        downloadTask(with: URLRequest(url: url))
    }

    /// A download of `request` (its URL and headers) into the session's download directory.
    public func downloadTask(with request: URLRequest) -> TransferDownloadTask {
        register(TransferDownloadTask(jobID: Self.newJobID(), request: request, destination: nil, session: self))
    }

    /// A download of `request` to `destination`, a file path of the caller's choosing inside the
    /// daemon's allowed roots. The file stays there: the delegate is not asked to move it.
    public func downloadTask(with request: URLRequest, to destination: URL) -> TransferDownloadTask {
        register(TransferDownloadTask(jobID: Self.newJobID(), request: request, destination: destination, session: self))
    }

    /// An upload of `fileURL` with `request`'s URL, method (`PUT`, `POST` or `PATCH`) and headers.
    /// The daemon keeps a synced copy from ``TransferTask/resume()`` on, so the file may change
    /// or go afterwards.
    public func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> TransferUploadTask {
        register(TransferUploadTask(jobID: Self.newJobID(), request: request, fileURL: fileURL, session: self))
    }

    /// The session's unfinished tasks, also those created by earlier processes, with their progress.
    public var allTasks: [TransferTask] {
        get async {
            await withCheckedContinuation { continuation in
                work.async { continuation.resume(returning: self.fetchUnfinishedTasks()) }
            }
        }
    }

    /// Calls `completionHandler` with ``allTasks``.
    public func getAllTasks(completionHandler: @escaping @Sendable ([TransferTask]) -> Void) {
        work.async { completionHandler(self.fetchUnfinishedTasks()) }
    }

    /// Stops listening and lets the daemon finish the tasks: a later session with the same
    /// identifier gets their ends.
    public func finishTasksAndInvalidate() {
        let listener: ListenerConnection? = state.withLock { state in
            state.invalidated = true
            return state.listener
        }
        listener?.client.shutdown()
        work.async { self.requests.close() }
    }

    /// Cancels every unfinished task of the session, then invalidates it.
    public func invalidateAndCancel() {
        work.async {
            for task in self.fetchUnfinishedTasks() { _ = try? self.requests.call(Cancel.self, .init(id: task.jobID)) }
            self.finishTasksAndInvalidate()
        }
    }

    // MARK: - Internals

    func register<T: TransferTask>(_ task: T) -> T {
        state.withLock { $0.tasks[task.jobID] = task }
        return task
    }

    /// The task object for `job`, made when this process has not seen it yet (a relaunch).
    func task(for job: Job) -> TransferTask {
        state.withLock { state in
            if let known = state.tasks[job.id] { return known }
            let made: TransferTask =
                job.kind == .upload
                ? TransferUploadTask(
                    jobID: job.id, request: Self.request(of: job), fileURL: job.source.map(URL.init(fileURLWithPath:)), session: self, job: job)
                : TransferDownloadTask(
                    jobID: job.id, request: Self.request(of: job),
                    destination: job.inbox == true ? nil : URL(fileURLWithPath: job.destination), session: self, job: job)
            state.tasks[job.id] = made
            return made
        }
    }

    private func fetchUnfinishedTasks() -> [TransferTask] {
        var found: [TransferTask] = []
        var cursor: String?
        repeat {
            let params = Status.Params(states: [.queued, .running, .waiting], session: configuration.identifier, limit: Status.maxLimit, cursor: cursor)
            guard let page = try? requests.call(Status.self, params) else { break }
            for job in page.jobs {
                let task = task(for: job)
                task.update(with: job)
                found.append(task)
            }
            cursor = page.nextCursor
        } while cursor != nil
        return found
    }

    /// A request rebuilt from a job another process submitted.
    static func request(of job: Job) -> URLRequest? {
        guard let url = URL(string: job.url) else { return nil }
        var request = URLRequest(url: url)
        request.httpMethod = job.method ?? "GET"
        return request
    }

    /// A job id the library chooses, so that a submit repeated after a lost answer finds its job.
    static func newJobID() -> String {
        var generator = SystemRandomNumberGenerator()
        let value: UInt64 = generator.next() & UInt64(Int.max)
        let hex = String(value, radix: 16)
        return "tk-" + String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// How a task ended, for the async call waiting for it: the job, and a completed download's file
/// (moved out of the daemon's inbox before the end is acknowledged).
struct Ending: Sendable {
    var job: Job
    var file: URL?
}

/// The listening thread's connection, kept where `finishTasksAndInvalidate` can shut it down.
final class ListenerConnection: @unchecked Sendable {
    // @unchecked: other threads call only `shutdown()`, which is safe from any thread; reads and
    // calls stay on the listening thread.
    let client: ControlClient
    init(_ client: ControlClient) { self.client = client }
}
