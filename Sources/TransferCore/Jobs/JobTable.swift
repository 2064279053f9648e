import Foundation
import TransferProtocol

/// Every job the core knows, with the indexes that keep each submit and lookup independent of how
/// many jobs are kept.
///
/// Unfinished jobs are held whole, but for the queued downloads replayed at start-up, or left
/// waiting by their submit, and not touched since, held as a `QueuedJob`. A finished job is held
/// as a `FinishedJob` of a few dozen bytes: what lists, retention, sessions and hooks need. The
/// whole record of a light job is read from the journal when asked for (`subscript`), so a daemon
/// that keeps a million finished jobs, or holds a million queued ones, does not hold a million
/// records.
struct JobTable {
    private var unfinished: [String: JobRecord] = [:]
    /// Queued downloads held light since start-up or their submit (`insertQueued`): setting one's
    /// record makes it whole.
    private var queuedLight = DenseTable<String, QueuedJob>()
    private var finished = DenseTable<String, FinishedJob>()
    /// Destination → the unfinished job writing to it.
    private var writers = DenseTable<String, String>()
    /// Owner → how many unfinished jobs they have.
    private var unfinishedPerOwner: [UInt32: Int] = [:]
    /// Owner → the journal bytes their jobs hold, finished ones included (`journal_bytes_per_user`).
    private var bytesPerOwner: [UInt32: Int] = [:]
    /// Unfinished jobs that are paused.
    private(set) var pausedCount = 0
    /// A session's finished jobs whose terminal event it has not acknowledged: what `subscribe`
    /// replays and `ack` marks, without a pass over every job.
    private var unacknowledged: [SessionKey: Set<String>] = [:]
    /// Finished jobs whose hook is still due.
    private var hooksDue: Set<String> = []
    /// Chosen id → the keys that qualify it with an owner (`UID:ID`, see `TransferManager+JobIDs`):
    /// how root finds another user's job by its id alone. Only ids shared by several users are here.
    private var qualified: [String: Set<String>] = [:]
    /// Reads a finished job's whole record (from the journal).
    private let load: @Sendable (String) -> JobRecord?
    /// Encodes the records `update` returns.
    let encoder = WireEncoder()

    init(load: @escaping @Sendable (String) -> JobRecord?) {
        self.load = load
    }

    var count: Int { unfinished.count + queuedLight.count + finished.count }

    func contains(_ id: String) -> Bool { unfinished[id] != nil || queuedLight[id] != nil || finished[id] != nil }

    /// Whether `id` is an unfinished job that is paused.
    func isPaused(_ id: String) -> Bool { unfinished[id]?.paused == true || queuedLight[id]?.paused == true }

    /// Whether `id` is held light (`QueuedJob`), its record in the journal only.
    func isLight(_ id: String) -> Bool { queuedLight[id] != nil }

    /// Whether `id` is a queued job that is not paused: what the scheduler asks of each candidate,
    /// answered without reading a light job's record.
    func isStartable(_ id: String) -> Bool {
        if let job = unfinished[id] { return job.state == .queued && job.paused != true }
        return queuedLight[id].map { !$0.paused } ?? false
    }

    /// A job's whole record. Setting a record keeps the indexes; a finished record must be in the
    /// journal's queue (`Journal.write` or `commit`) before anything reads it back.
    subscript(id: String) -> JobRecord? {
        get {
            if let job = unfinished[id] { return job }
            guard finished[id] != nil || queuedLight[id] != nil else { return nil }
            return load(id)
        }
        set {
            remove(id)
            guard let job = newValue else { return }
            index(id)
            if job.state.isTerminal {
                insertFinished(id, FinishedJob(job))
            } else {
                unfinished[id] = job
                noteUnfinished(id, writing: job.isUpload ? nil : job.destination, owner: job.owner, weight: job.journalWeight, paused: job.paused == true)
            }
        }
    }

    /// Makes room for `count` more finished jobs (start-up).
    mutating func reserveFinished(_ count: Int) {
        finished.reserveCapacity(finished.count + count)
    }

    /// Makes room for `count` more light queued jobs (start-up).
    mutating func reserveQueued(_ count: Int) {
        queuedLight.reserveCapacity(queuedLight.count + count)
        writers.reserveCapacity(writers.count + count)
    }

    /// Adds a queued download known only by its light form (start-up, or a submit whose record is
    /// written): its record, as the journal holds it, is read when asked for.
    /// `replacing` false: `id` is known to be new (start-up reads each job once).
    mutating func insertQueued(_ id: String, _ job: QueuedJob, replacing: Bool = true) {
        if replacing, contains(id) { remove(id) }
        index(id)
        queuedLight[id] = job
        noteUnfinished(id, writing: job.destination, owner: job.summary.owner, weight: Int(job.summary.weight), paused: job.paused)
    }

    /// Adds a finished job known only by its summary (start-up, before its record is needed).
    mutating func insertFinished(_ id: String, _ summary: FinishedJob, replacing: Bool = true) {
        if replacing, contains(id) { remove(id) }
        index(id)
        finished[id] = summary
        bytesPerOwner[summary.owner, default: 0] += Int(summary.weight)
        if let key = summary.unacknowledgedSession { unacknowledged[key, default: []].insert(id) }
        if summary.hookPending { hooksDue.insert(id) }
    }

    /// The keys that qualify the chosen id `id` with an owner.
    func qualifiedKeys(of id: String) -> Set<String> { qualified[id] ?? [] }

    private mutating func index(_ key: String) {
        guard let colon = key.utf8.firstIndex(of: UInt8(ascii: ":")) else { return }
        qualified[String(key[key.index(after: colon)...]), default: []].insert(key)
    }

    private mutating func remove(_ id: String) {
        if let colon = id.utf8.firstIndex(of: UInt8(ascii: ":")), contains(id) {
            let chosen = String(id[id.index(after: colon)...])
            qualified[chosen]?.remove(id)
            if qualified[chosen]?.isEmpty == true { qualified[chosen] = nil }
        }
        if let old = unfinished.removeValue(forKey: id) {
            forgetUnfinished(id, writing: old.isUpload ? nil : old.destination, owner: old.owner, weight: old.journalWeight, paused: old.paused == true)
        } else if let old = queuedLight.removeValue(forKey: id) {
            forgetUnfinished(id, writing: old.destination, owner: old.summary.owner, weight: Int(old.summary.weight), paused: old.paused)
        } else if let old = finished.removeValue(forKey: id) {
            release(Int(old.weight), of: old.owner)
            if let key = old.unacknowledgedSession {
                unacknowledged[key]?.remove(id)
                if unacknowledged[key]?.isEmpty == true { unacknowledged[key] = nil }
            }
            if old.hookPending { hooksDue.remove(id) }
        }
    }

    /// Puts an unfinished job in the indexes: the writer of `destination`, its owner's counts.
    private mutating func noteUnfinished(_ id: String, writing destination: String?, owner: UInt32, weight: Int, paused: Bool) {
        if let destination { writers[destination] = id }
        unfinishedPerOwner[owner, default: 0] += 1
        bytesPerOwner[owner, default: 0] += weight
        if paused { pausedCount += 1 }
    }

    /// Takes an unfinished job out of the indexes: the writer of `destination`, its owner's counts.
    private mutating func forgetUnfinished(_ id: String, writing destination: String?, owner: UInt32, weight: Int, paused: Bool) {
        if let destination, writers[destination] == id { writers[destination] = nil }
        let left = (unfinishedPerOwner[owner] ?? 1) - 1
        unfinishedPerOwner[owner] = left > 0 ? left : nil
        release(weight, of: owner)
        if paused { pausedCount -= 1 }
    }

    private mutating func release(_ bytes: Int, of owner: UInt32) {
        let left = (bytesPerOwner[owner] ?? 0) - bytes
        bytesPerOwner[owner] = left > 0 ? left : nil
    }

    /// About how many journal bytes `owner`'s jobs hold, finished ones included.
    func journalBytes(of owner: UInt32) -> Int { bytesPerOwner[owner] ?? 0 }

    /// The finished jobs of `owner`'s `session` whose terminal event the session has not acknowledged.
    func unacknowledged(owner: UInt32, session: String) -> [(id: String, summary: FinishedJob)] {
        (unacknowledged[SessionKey(owner: owner, session: session)] ?? []).compactMap { id in finished[id].map { (id, $0) } }
    }

    /// The finished jobs whose hook is still due.
    var dueHooks: [(id: String, summary: FinishedJob)] {
        hooksDue.compactMap { id in finished[id].map { (id, $0) } }
    }

    /// What lists and filters read of a job, whole or finished.
    func summary(_ id: String) -> FinishedJob? {
        if let job = unfinished[id] { return FinishedJob(job) }
        return queuedLight[id]?.summary ?? finished[id]
    }

    /// The unfinished job writing to `destination`, if any.
    func writer(of destination: String) -> String? { writers[destination] }

    /// How many unfinished jobs `owner` has.
    func unfinishedCount(of owner: UInt32) -> Int { unfinishedPerOwner[owner] ?? 0 }

    /// The unfinished jobs held whole, in no particular order: every unfinished job but the light
    /// queued downloads (which are queued, not paused or paused, downloads without a start time).
    var wholeUnfinishedJobs: Dictionary<String, JobRecord>.Values { unfinished.values }

    /// Where each unfinished job stands in its class, and its owner and session, light ones
    /// included, in no particular order.
    func forEachUnfinishedPlace(_ body: (UnfinishedPlace) -> Void) {
        for job in unfinished.values {
            body(UnfinishedPlace(id: job.id, owner: job.owner, session: job.session, priority: job.priorityClass, position: job.queuePosition, order: job.order))
        }
        for (id, job) in queuedLight {
            body(UnfinishedPlace(id: id, owner: job.summary.owner, session: job.summary.session, priority: job.priority, position: job.queuePosition, order: job.summary.order))
        }
    }

    /// The finished jobs' summaries, in no particular order.
    var finishedJobs: DenseTable<String, FinishedJob> { finished }

    /// Every job's summary, in no particular order.
    func forEachSummary(_ body: (String, FinishedJob) -> Void) {
        for (id, job) in unfinished { body(id, FinishedJob(job)) }
        for (id, job) in queuedLight { body(id, job.summary) }
        for (id, job) in finished { body(id, job) }
    }
}

/// Where an unfinished job stands in its class, with what selections match it by.
struct UnfinishedPlace {
    var id: String
    var owner: UInt32
    var session: String?
    var priority: JobPriority
    var position: Int64
    var order: UInt64
}

/// A user's session.
struct SessionKey: Hashable {
    var owner: UInt32
    var session: String
}

/// What the core keeps of a job in memory once it has ended (and reads of any job for lists):
/// the whole record stays in the journal.
struct FinishedJob: Sendable, Equatable {
    var order: UInt64
    var createdAt: Double
    /// `finishedAt` and `eventSeq` without the room an optional takes (nan, max: none).
    private var finishedAtOrNaN: Double
    private var eventSeqOrMax: UInt64
    var owner: UInt32
    var state: JobState
    var acknowledged: Bool
    var hookPending: Bool
    var session: String?
    /// About how many journal bytes the job's record takes (its size on disk, read at start-up).
    var weight: UInt32 = 0

    var finishedAt: Double? {
        get { finishedAtOrNaN.isNaN ? nil : finishedAtOrNaN }
        set { finishedAtOrNaN = newValue ?? .nan }
    }

    var eventSeq: UInt64? {
        get { eventSeqOrMax == .max ? nil : eventSeqOrMax }
        set { eventSeqOrMax = newValue ?? .max }
    }

    init(
        order: UInt64, createdAt: Double, finishedAt: Double?, eventSeq: UInt64?, owner: UInt32, state: JobState,
        acknowledged: Bool, hookPending: Bool, session: String?
    ) {
        self.order = order
        self.createdAt = createdAt
        self.finishedAtOrNaN = finishedAt ?? .nan
        self.eventSeqOrMax = eventSeq ?? .max
        self.owner = owner
        self.state = state
        self.acknowledged = acknowledged
        self.hookPending = hookPending
        self.session = session
    }

    static func == (left: FinishedJob, right: FinishedJob) -> Bool {
        left.order == right.order && left.createdAt == right.createdAt && left.finishedAt == right.finishedAt
            && left.eventSeq == right.eventSeq && left.owner == right.owner && left.state == right.state
            && left.acknowledged == right.acknowledged && left.hookPending == right.hookPending && left.session == right.session
    }

    /// The session waiting for this job's terminal event, if one is.
    var unacknowledgedSession: SessionKey? {
        guard let session, !acknowledged, eventSeq != nil, state.isTerminal else { return nil }
        return SessionKey(owner: owner, session: session)
    }

    init(_ job: JobRecord) {
        self.init(
            order: job.order, createdAt: job.createdAt.timeIntervalSince1970, finishedAt: job.finishedAt?.timeIntervalSince1970,
            eventSeq: job.eventSeq, owner: job.owner, state: job.state, acknowledged: job.acknowledged == true,
            hookPending: job.hookPending == true, session: job.session)
        weight = UInt32(clamping: job.journalWeight)
    }
}
