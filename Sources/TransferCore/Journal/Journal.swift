public import Logging
import Foundation
import Dispatch
import Metrics
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Why the journal cannot be used.
public struct JournalError: Error, CustomStringConvertible, Sendable {
    public enum Code: Sendable, Equatable {
        /// A damaged record is followed by valid ones: the file is corrupt, not merely torn.
        case corrupt
        /// A write, sync, or rename failed; nothing after it was acknowledged.
        case io
        /// The journal failed earlier and accepts nothing more.
        case failed
        /// A key or value that cannot be stored.
        case invalidInput
        /// The filesystem had no room for the records (`ENOSPC`, `EDQUOT`): they were not
        /// written, the journal was cut back to its last complete record and keeps serving.
        case noSpace
    }

    public var code: Code
    public var message: String
    public var description: String { message }
}

/// The durable key-value log behind every accepted job.
///
/// Writers call `commit(_:)`, which returns only once their records are written and
/// `fdatasync`ed. Records of concurrent callers are written and synced together (group commit)
/// on one serial queue, off the cooperative thread pool. The journal keeps where the latest value of
/// every live key lies in the file (not the value: `value(forKey:)` reads it back), so it can
/// compact itself: when the file grows well past what the live keys need, it copies them to a
/// temporary file, syncs it, renames it over the journal and syncs the directory. A failed sync,
/// or a write that fails for anything but space, is fatal: the journal refuses everything
/// afterwards and reports the failure through `onFatal`. A write refused for space is not (see
/// `Journal+Space.swift`): the file is cut back, the records wait in memory, and the writers
/// that waited for them are told `.noSpace`.
public final class Journal: Sendable {
    /// One change to commit.
    public enum Change: Sendable {
        case put(key: String, value: [UInt8])
        case delete(key: String)
    }

    /// When compaction runs.
    public struct CompactionPolicy: Sendable {
        /// No compaction below this file size.
        public var minimumBytes: Int
        /// Compact when the file is this many times larger than the live records.
        public var ratio: Int
        public init(minimumBytes: Int = 1 << 20, ratio: Int = 4) {
            self.minimumBytes = minimumBytes
            self.ratio = ratio
        }
    }

    /// The steps of a compaction, for tests that stop one part-way.
    public enum CompactionStep: Sendable, Equatable {
        case halfOfTemporaryWritten
        case temporarySynced
        case renamed
        case directorySynced
    }

    struct SimulatedCrash: Error {}

    /// Counters for tests and status.
    public struct Statistics: Sendable, Equatable {
        public var syncs = 0
        public var recordsWritten = 0
        public var compactions = 0
        public var fileBytes = 0
        /// Batches whose write was refused for space (and cut back).
        public var spaceRefusals = 0
    }

    /// What the writer and the readers share, under `state`'s lock.
    struct State {
        var pending: [Change] = []
        /// Changes the writer has taken from `pending` and not yet applied to `live`.
        var writing: [Change] = []
        var waiters: [CheckedContinuation<Void, any Error>] = []
        var drainScheduled = false
        /// Whether the scheduled drain waits `lazyWriteNanoseconds` (nobody waits for its records).
        var drainDelayed = false
        var failure: JournalError?
        /// The journal file, open for appending and for reading values back.
        var fd: Int32
        var nextSequence: UInt64
        var index: DenseTable<IndexKey, Location>
        var liveBytes: Int
        var statistics = Statistics()
        /// Set while records wait in `pending` because the last write was refused for space;
        /// cleared by the next write that succeeds.
        var shortOfSpace: JournalError?
        /// While short of space, a drain with no waiter does not try again before this time
        /// (monotonic nanoseconds); a timer tries then.
        var retryWritesAt: UInt64 = 0
        /// Whether the retry timer is set.
        var retryArmed = false
        /// A compaction refused for space is not tried again before this time (monotonic nanoseconds).
        var compactAfter: UInt64 = 0
    }

    /// How long records nobody waits for may wait to be written.
    let lazyWriteNanoseconds: UInt64
    /// The journal file.
    public let path: String
    /// The directory holding it.
    public let directory: String
    let state: Mutex<State>
    /// The writer's queue: every write, sync and compaction runs on it, one at a time.
    let queue = DispatchQueue(label: "transferd.journal")
    let policy: CompactionPolicy
    let logger: Logger
    let onFatal: @Sendable (JournalError) -> Void
    private let syncCounter = Counter(label: "transferd_journal_syncs_total")
    private let syncDuration = Metrics.Timer(label: "transferd_journal_sync_duration_seconds")

    /// The name of the journal file inside the state directory.
    public static let fileName = "journal.log"

    /// Opens (creating if needed) the journal in `directory`, replaying it.
    ///
    /// A torn tail is cut off after a copy of the file is saved beside it; a damaged record
    /// followed by valid ones throws `.corrupt` naming the file and the byte offset.
    ///
    /// Records nobody waits for (`write`) may wait `lazyWriteNanoseconds` to be written.
    public init(
        directory: String,
        policy: CompactionPolicy = CompactionPolicy(),
        lazyWriteNanoseconds: UInt64 = 2_000_000,
        logger: Logger,
        onFatal: @escaping @Sendable (JournalError) -> Void = { _ in }
    ) throws(JournalError) {
        self.directory = directory
        self.lazyWriteNanoseconds = lazyWriteNanoseconds
        self.path = directory + "/" + Self.fileName
        self.policy = policy
        self.logger = logger
        self.onFatal = onFatal
        let recovered = try Self.recover(path: path, directory: directory, logger: logger)
        let fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw JournalError(code: .io, message: "cannot open the journal: \(FileIOError("open", path))")
        }
        // It holds request headers: private even when copied in with a wider mode.
        fchmod(fd, 0o600)
        if recovered.created {
            do throws(FileIOError) {
                try FileIO.fsync(fd, path: path)
                try FileIO.syncDirectory(directory)
            } catch {
                close(fd)
                throw JournalError(code: .io, message: "cannot create the journal: \(error)")
            }
        }
        var initial = State(
            fd: fd, nextSequence: recovered.lastSequence + 1, index: recovered.index,
            liveBytes: recovered.index.reduce(0) { $0 + Self.estimatedLineBytes(keyLength: $1.key.keyLength, length: $1.value.length) })
        initial.statistics.fileBytes = recovered.fileBytes
        state = Mutex(initial)
    }

    deinit {
        _ = state.withLock { close($0.fd) }
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Writes `changes` and returns once they are on disk.
    public func commit(_ changes: [Change]) async throws {
        for change in changes where !Self.isStorable(change) {
            throw JournalError(code: .invalidInput, message: "journal change \(change) is not storable")
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if let failure = enqueue(changes, waiter: continuation) {
                continuation.resume(throwing: JournalError(code: .failed, message: "the journal failed earlier: \(failure.message)"))
            }
        }
    }

    /// Queues `changes` for writing in call order without waiting for the disk: for records
    /// that acknowledge nothing (progress, state the journal replay would recover anyway).
    /// A failure is still fatal, through `onFatal`.
    ///
    /// They are written up to `lazyWriteNanoseconds` later, with whatever comes meanwhile, or at
    /// once with the next change someone waits for: each write is followed by a sync, and the
    /// records of many short transfers (started, finished) then share one instead of taking one
    /// each.
    ///
    /// `promptly` writes them at once, as before a change someone waits for: for a record that a
    /// step on the filesystem soon after relies on at recovery (a partial file's inode, which
    /// tells a landed file from a stranger's).
    public func write(_ changes: [Change], promptly: Bool = false) {
        _ = enqueue(changes.filter(Self.isStorable), waiter: nil, promptly: promptly)
    }

    /// Appends `changes` (and the waiter to resume once they are synced) in call order, and starts
    /// the writer if it is idle: at once for a waiter, after `lazyWriteNanoseconds` without one.
    /// Returns the earlier failure instead when the journal has failed.
    private func enqueue(
        _ changes: [Change], waiter: CheckedContinuation<Void, any Error>?, promptly: Bool = false
    ) -> JournalError? {
        let hurries = waiter != nil || promptly
        let (failure, schedule, delayed): (JournalError?, Bool, Bool) = state.withLock { state in
            if let failure = state.failure { return (failure, false, false) }
            state.pending.append(contentsOf: changes)
            if let waiter { state.waiters.append(waiter) }
            // A waiter hurries a drain that was put off; a drain scheduled or running takes it all.
            if state.drainScheduled && !(hurries && state.drainDelayed) { return (nil, false, false) }
            state.drainScheduled = true
            state.drainDelayed = !hurries
            return (nil, true, !hurries)
        }
        // A drain put off and then hurried runs twice; the second finds nothing to do.
        if schedule && delayed {
            queue.asyncAfter(deadline: .now() + .nanoseconds(Int(lazyWriteNanoseconds))) { self.drain() }
        } else if schedule {
            queue.async { self.drain() }
        }
        return failure
    }

    private static func isStorable(_ change: Change) -> Bool {
        switch change {
        case .put(let key, let value): return JournalRecord.isValidKey(key) && !value.contains(UInt8(ascii: "\n"))
        case .delete(let key): return JournalRecord.isValidKey(key)
        }
    }

    /// Returns once everything written or committed before the call is on disk.
    public func sync() async throws { try await commit([]) }

    // MARK: - Writing

    func drain() {
        while true {
            let (changes, waiters, fd, failed, start, postponed) = state.withLock { state in
                // Short of space, records without a waiter wait for the retry timer, not for every progress write.
                if state.shortOfSpace != nil && state.waiters.isEmpty && MonotonicClock.nanoseconds() < state.retryWritesAt {
                    state.drainScheduled = false
                    return ([Change](), [CheckedContinuation<Void, any Error>](), state.fd, false, 0, true)
                }
                state.drainDelayed = false
                let taken = (state.pending, state.waiters, state.fd, state.failure != nil, state.statistics.fileBytes, false)
                state.writing = state.pending
                state.pending = []
                state.waiters = []
                if taken.0.isEmpty && taken.1.isEmpty { state.drainScheduled = false }
                return taken
            }
            if postponed || (changes.isEmpty && waiters.isEmpty) { return }
            if failed {
                let error = JournalError(code: .failed, message: "the journal failed earlier")
                waiters.forEach { $0.resume(throwing: error) }
                continue
            }
            if changes.isEmpty {
                waiters.forEach { $0.resume() }
                continue
            }
            do throws(FileIOError) {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(changes.count * 512)
                var sequence = state.withLock { $0.nextSequence }
                // Where each put's value lands in the file, for reading it back.
                var locations: [Location] = []
                locations.reserveCapacity(changes.count)
                for change in changes {
                    record(for: change, sequence: sequence).encode(into: &bytes)
                    if case .put(_, let value) = change {
                        locations.append(Location(offset: start + bytes.count - 1 - value.count, length: value.count))
                    }
                    sequence += 1
                }
                try FileIO.writeAll(fd, bytes, path: path)
                let syncStart = MonotonicClock.nanoseconds()
                try FileIO.fdatasync(fd, path: path)
                syncDuration.recordNanoseconds(MonotonicClock.nanoseconds() &- syncStart)
                syncCounter.increment()
                let shouldCompact: Bool = state.withLock { state in
                    state.nextSequence = sequence
                    var next = locations.makeIterator()
                    for change in changes { Self.apply(change, at: &next, to: &state) }
                    state.writing = []
                    state.shortOfSpace = nil
                    state.statistics.syncs += 1
                    state.statistics.recordsWritten += changes.count
                    state.statistics.fileBytes += bytes.count
                    return state.statistics.fileBytes >= policy.minimumBytes
                        && state.statistics.fileBytes >= policy.ratio * max(state.liveBytes, 1)
                        && MonotonicClock.nanoseconds() >= state.compactAfter
                }
                waiters.forEach { $0.resume() }
                if shouldCompact {
                    do {
                        try compactNow(stopAfter: nil)
                    } catch let error as JournalError where error.code == .noSpace {
                        compactionRefusedForSpace(error)
                    } catch let error as JournalError {
                        fail(error, waiters: [])
                    } catch {
                        fail(JournalError(code: .io, message: "compaction failed: \(error)"), waiters: [])
                    }
                }
            } catch let error where error.operation == "write" && FileIO.isOutOfSpace(error.errno) {
                // Not fatal (design rule 4): nothing of this batch was acknowledged.
                guard writeRefusedForSpace(error, changes: changes, waiters: waiters, cutBackTo: start, fd: fd) else { return }
            } catch {
                fail(JournalError(code: .io, message: "journal write failed: \(error)"), waiters: waiters)
            }
        }
    }

    func fail(_ error: JournalError, waiters: [CheckedContinuation<Void, any Error>]) {
        state.withLock { state in if state.failure == nil { state.failure = error } }
        logger.critical("journal failure: nothing more will be acknowledged", metadata: ["error": "\(error.message)"])
        // The owner hears of the failure before any waiter does: a daemon stops (and answers no
        // one) before a caller could act on the refusal as if the journal still worked.
        onFatal(error)
        waiters.forEach { $0.resume(throwing: error) }
    }

    private func record(for change: Change, sequence: UInt64) -> JournalRecord {
        switch change {
        case .put(let key, let value):
            return JournalRecord(sequence: sequence, operation: .put, key: key, value: value)
        case .delete(let key):
            return JournalRecord(sequence: sequence, operation: .delete, key: key, value: [])
        }
    }

    private static func apply(_ change: Change, at locations: inout IndexingIterator<[Location]>, to state: inout State) {
        switch change {
        case .put(let key, _):
            guard let location = locations.next() else { return }
            let indexKey = IndexKey(key)
            if let old = state.index.updateValue(location, forKey: indexKey) {
                state.liveBytes -= estimatedLineBytes(keyLength: key.utf8.count, length: old.length)
            }
            state.liveBytes += estimatedLineBytes(keyLength: key.utf8.count, length: location.length)
        case .delete(let key):
            if let old = state.index.removeValue(forKey: IndexKey(key)) {
                state.liveBytes -= estimatedLineBytes(keyLength: key.utf8.count, length: old.length)
            }
        }
    }

    private static func estimatedLineBytes(keyLength: Int, length: Int) -> Int {
        keyLength + length + 40
    }
}

extension Journal {
    /// Runs `block` on the writer's queue, so that nothing is written or synced until it returns.
    /// Only for tests that imitate a disk whose writes hang.
    public func stallWriterForTesting(_ block: @escaping @Sendable () -> Void) {
        queue.async(execute: block)
    }
}
