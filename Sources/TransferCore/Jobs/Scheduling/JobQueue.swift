/// Where a queued job stands: its class first, then whether it continues a transfer that was
/// stopped (a restart, a background job's yield), then its position (submission order unless moved),
/// then submission order.
///
/// 24 bytes: the queue holds one in each entry and one in its index by id, for every queued job.
struct QueueKey: Comparable, Sendable {
    var position: Int64
    var order: UInt64
    private var storedRank: UInt8
    private var storedLane: UInt8

    /// The class's rank (`JobPriority.rank`, 0 to 2): lower starts first.
    var rank: Int { Int(storedRank) }
    /// 0: continues a stopped transfer, ahead of the rest of its class; 1: the others.
    var lane: Int { Int(storedLane) }

    init(rank: Int, lane: Int, position: Int64, order: UInt64) {
        self.position = position
        self.order = order
        storedRank = UInt8(clamping: rank)
        storedLane = UInt8(clamping: lane)
    }

    static func < (left: QueueKey, right: QueueKey) -> Bool {
        (left.storedRank, left.storedLane, left.position, left.order) < (right.storedRank, right.storedLane, right.position, right.order)
    }
}

/// The queued jobs in the order they start, with the host each one fetches from.
///
/// Kept sorted by `QueueKey`; an insertion or removal is a binary search and one move of the
/// entries on the shorter side, so a queue of a million jobs takes a submit, and gives up the job
/// that starts (near its front), in microseconds. The entries live in `storage` from `head` on;
/// the slots before `head` are spent and are dropped once they are half of the storage.
struct JobQueue {
    struct Entry: Sendable {
        var key: QueueKey
        var id: String
        /// The URL's host, lowercased (`max_connections_per_host` counts transfers by it).
        var host: String
    }

    private var storage: [Entry] = []
    private var head = 0
    private var keys = DenseTable<String, QueueKey>()
    /// Host → how many queued jobs fetch from it.
    private(set) var queuedPerHost: [String: Int] = [:]

    /// The entries in the order they start.
    var entries: ArraySlice<Entry> { storage[head...] }
    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }
    func contains(_ id: String) -> Bool { keys[id] != nil }
    func key(of id: String) -> QueueKey? { keys[id] }
    subscript(index: Int) -> Entry { storage[head + index] }

    /// Makes room for `count` entries in all (start-up, which knows how many it queues).
    mutating func reserveCapacity(_ count: Int) {
        storage.reserveCapacity(count)
        keys.reserveCapacity(count)
    }

    /// Queues `id` at `key`, or moves it there when it is queued already.
    mutating func insert(_ id: String, key: QueueKey, host: String) {
        // One lookup by id: a new job (start-up, submits) is only hashed once.
        if let old = keys.updateValue(key, forKey: id) { removeEntry(id, at: old) }
        // Jobs queued in their order (start-up, most submits) go at the end.
        let entry = Entry(key: key, id: id, host: host)
        if storage.last.map({ key < $0.key }) != true {
            storage.append(entry)
        } else {
            let index = firstIndex(after: key)
            if head > 0, index < count / 2 {
                // Nearer the front: move the entries before it one slot towards the spent ones.
                head -= 1
                for slot in head..<(head + index) { storage[slot] = storage[slot + 1] }
                storage[head + index] = entry
            } else {
                storage.insert(entry, at: head + index)
            }
        }
        queuedPerHost[host, default: 0] += 1
    }

    /// Takes `id` out of the queue; returns its entry when it was queued.
    @discardableResult
    mutating func remove(_ id: String) -> Entry? {
        guard let key = keys.removeValue(forKey: id) else { return nil }
        return removeEntry(id, at: key)
    }

    @discardableResult
    mutating func remove(at index: Int) -> Entry {
        let entry = take(at: index)
        keys[entry.id] = nil
        return entry
    }

    /// Takes the entry of `id`, queued at `key`, out of the storage (not out of `keys`).
    @discardableResult
    private mutating func removeEntry(_ id: String, at key: QueueKey) -> Entry? {
        var index = firstIndex(notBefore: key)
        while index < count, self[index].id != id { index += 1 }
        return index < count ? take(at: index) : nil
    }

    /// Takes the entry at `index` out of the storage (not out of `keys`).
    private mutating func take(at index: Int) -> Entry {
        let entry = self[index]
        if index < count / 2 {
            // Nearer the front: move the entries before it one slot back and spend the first slot.
            for slot in stride(from: head + index, to: head, by: -1) { storage[slot] = storage[slot - 1] }
            head += 1
            if head >= 1024, head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
        } else {
            storage.remove(at: head + index)
        }
        if isEmpty {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
        let left = (queuedPerHost[entry.host] ?? 1) - 1
        queuedPerHost[entry.host] = left > 0 ? left : nil
        return entry
    }

    /// The index of the first entry whose key is not below `key`.
    private func firstIndex(notBefore key: QueueKey) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if self[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the first entry whose key is above `key` (equal keys keep their arrival order).
    private func firstIndex(after key: QueueKey) -> Int {
        var (low, high) = (0, count)
        while low < high {
            let middle = (low + high) / 2
            if key < self[middle].key { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
