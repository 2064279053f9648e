import Dispatch
import Synchronization

/// Fills a `JobQueue` with the light queued jobs replayed at start-up, on a thread of its own,
/// while the caller fills the job table from the same list.
final class QueueFill: Sendable {
    private let queue: Mutex<JobQueue?> = Mutex(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts queueing the jobs of `light` that are not paused, in the order of `light`, in a
    /// queue with room for `capacity` entries.
    init(_ light: [(id: String, job: QueuedJob, host: String)], capacity: Int) {
        DispatchQueue.global().async { [self] in
            var filled = JobQueue()
            filled.reserveCapacity(capacity)
            // One copy of each host's name, shared by its jobs.
            var hosts: [String: String] = [:]
            for (id, job, host) in light where !job.paused {
                let shared: String
                if let known = hosts[host] {
                    shared = known
                } else {
                    hosts[host] = host
                    shared = host
                }
                filled.insert(id, key: TransferManager.queueKey(job), host: shared)
            }
            queue.withLock { $0 = filled }
            done.signal()
        }
    }

    /// The queue, once it is filled.
    func wait() -> JobQueue {
        done.wait()
        return queue.withLock { queue in
            defer { queue = nil }
            return queue ?? JobQueue()
        }
    }
}
