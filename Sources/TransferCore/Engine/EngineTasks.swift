#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Every URLSession task the engine has running, by task identifier, with the transfer it belongs
/// to: one table for downloads and uploads, so each callback finds its transfer with one lookup
/// under one lock.
final class EngineTasks: Sendable {
    /// The transfer a task belongs to.
    enum Owner {
        case download(DownloadContext)
        case upload(UploadContext)
    }

    private let byTask = Mutex<[Int: Owner]>([:])

    func owner(of task: Int) -> Owner? {
        byTask.withLock { $0[task] }
    }

    func register(_ task: Int, _ owner: Owner) {
        byTask.withLock { $0[task] = owner }
    }

    /// Takes the task out of the table (it has ended); returns what it belonged to.
    func unregister(_ task: Int) -> Owner? {
        byTask.withLock { $0.removeValue(forKey: task) }
    }
}
