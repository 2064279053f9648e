import TransferProtocol

/// Which queued job starts next, and which background transfers give their slot up: pure
/// decisions over the queue and the running transfers, with no clock, journal or engine.
///
/// Queued jobs start by class (`foreground`, `normal`, `background`), then by position within
/// the class (`JobQueue`). A job whose host already has `maxPerHost` transfers running is passed
/// over while a job to another host can start; it keeps its place. A running `background`
/// transfer yields when a `foreground` or `normal` job waits for its slot (or for its host).
struct Scheduler {
    /// One running transfer, as scheduling sees it.
    struct Slot: Equatable {
        var id: String
        var host: String
        /// Where it would stand in the queue (the order yields are chosen in: the last first).
        var key: QueueKey
        var isBackground: Bool
        /// Why it is stopping already, if it is; one that yields has its slot count as free.
        var stopping: StopReason?
    }

    /// A background transfer asked to stop so that `forJob` can start.
    struct Yield: Equatable {
        var victim: String
        var forJob: String
    }

    var maxConcurrent: Int
    var maxPerHost: Int

    /// Running transfers per host, given the host of each.
    static func perHost(_ hosts: some Sequence<String>) -> [String: Int] {
        var counts: [String: Int] = [:]
        for host in hosts { counts[host, default: 0] += 1 }
        return counts
    }

    /// Takes the first queued job whose host is below its limit out of `queue`; nil when none can
    /// start. Entries `isStartable` refuses (jobs no longer queued, or paused) are dropped on the way.
    func next(from queue: inout JobQueue, perHost: [String: Int], isStartable: (String) -> Bool) -> String? {
        var open = Set(queue.queuedPerHost.keys.filter { perHost[$0, default: 0] < maxPerHost })
        var index = 0
        while !open.isEmpty, index < queue.count {
            let entry = queue[index]
            guard isStartable(entry.id) else {
                queue.remove(at: index)
                if queue.queuedPerHost[entry.host] == nil { open.remove(entry.host) }
                continue
            }
            guard open.contains(entry.host) else {
                index += 1
                continue
            }
            queue.remove(at: index)
            return entry.id
        }
        return nil
    }

    /// The background transfers to stop for the foreground and normal jobs that cannot start for
    /// want of a slot or of a connection to their host: one transfer per waiting job, the last in
    /// queue order first, one to the same host when the host is what the job waits for.
    func yields(queue: JobQueue, running slots: [Slot], isStartable: (String) -> Bool) -> [Yield] {
        var candidates = slots.filter { $0.isBackground && $0.stopping == nil }
        guard !candidates.isEmpty else { return [] }
        candidates.sort { $0.key < $1.key }
        var perHost = Self.perHost(slots.lazy.map(\.host))
        let yielding = slots.filter { $0.stopping == .yield }
        for slot in yielding { perHost[slot.host, default: 0] -= 1 }
        // Slots free now, or once the transfers already yielding have stopped.
        var free = maxConcurrent - slots.count + yielding.count
        // Hosts whose waiting jobs no background transfer stands in the way of.
        var blocked = Set<String>()
        var chosen: [Yield] = []
        for index in 0..<queue.count {
            let entry = queue[index]
            if entry.key.rank >= JobPriority.background.rank { break }
            if blocked.contains(entry.host) { continue }
            guard isStartable(entry.id) else { continue }
            let hostFull = perHost[entry.host, default: 0] >= maxPerHost
            if free > 0, !hostFull {
                // It gets a free slot: the jobs after it do not count on that one.
                free -= 1
                perHost[entry.host, default: 0] += 1
                continue
            }
            let pick = hostFull ? candidates.lastIndex { $0.host == entry.host } : candidates.indices.last
            guard let pick else {
                blocked.insert(entry.host)
                if blocked.count >= queue.queuedPerHost.count { break }
                continue
            }
            let candidate = candidates.remove(at: pick)
            chosen.append(Yield(victim: candidate.id, forJob: entry.id))
            // The stopped transfer's slot (and its connection to its host) go to this job.
            perHost[candidate.host, default: 0] -= 1
            perHost[entry.host, default: 0] += 1
            if candidates.isEmpty { break }
        }
        return chosen
    }
}
