import TransferProtocol

/// How job events are numbered and leave for the hub, as a value: no journal, no hub, no task.
///
/// Numbers are reserved in the journal a block at a time, well before they are used, so that
/// numbering continues upwards after a crash: `next()` says when a new reservation must be
/// written. Events leave in sequence order, a batch at a time; the core syncs the journal before
/// a batch that holds a terminal event (see `TransferManager.enqueue`), and frees the spool copies
/// of the uploads that ended only after that sync.
struct EventOutbox {
    /// Sequence numbers reserved at a time.
    static let block: UInt64 = 1 << 20

    /// The last sequence number assigned.
    private(set) var lastSeq: UInt64
    /// How far the journal has reserved numbers.
    private(set) var reservedSeq: UInt64
    /// The sequence number of each unfinished job's latest event, for the replay of its current
    /// state (a finished job's is its `eventSeq`).
    var latestSeq = DenseTable<String, UInt64>()
    /// Events on their way to the hub, in sequence order.
    private var pending: [JobEvent] = []
    /// Spool copies of ended uploads, freed once the journal holds the records of their ends.
    private var copies: [String] = []
    /// The copies of the batch being drained, freed by the drain after its sync.
    private var draining: [String] = []
    /// Whether a drain is under way (it takes every batch until none is left).
    private(set) var isDraining = false

    /// What one drain step takes: the events to publish and the copies to free, after a sync when
    /// `needsSync`.
    struct Batch {
        var events: [JobEvent]
        var copies: [String]

        /// A terminal event, or a copy to free, waits until the journal holds its job's end.
        var needsSync: Bool { !copies.isEmpty || events.contains(where: \.type.isTerminal) }
    }

    /// Numbering continues after `lastSeq`, with a block reserved above it.
    init(after lastSeq: UInt64) {
        self.lastSeq = lastSeq
        reservedSeq = lastSeq + Self.block
    }

    /// The next sequence number, and the reservation to journal first when half the reserved
    /// block is used up.
    mutating func next() -> (seq: UInt64, reservation: UInt64?) {
        lastSeq += 1
        guard lastSeq + Self.block / 2 > reservedSeq else { return (lastSeq, nil) }
        reservedSeq = lastSeq + Self.block
        return (lastSeq, reservedSeq)
    }

    /// Queues an event; true when a drain must be started for it.
    mutating func enqueue(_ event: JobEvent) -> Bool {
        pending.append(event)
        return startsDrain()
    }

    /// Queues an ended upload's spool copy, to be freed by the next batch once the record of its
    /// end (written before the batch is taken) is on disk; true when a drain must be started.
    mutating func free(_ copy: String) -> Bool {
        copies.append(copy)
        return startsDrain()
    }

    /// The copies queued or being drained, for a caller that syncs the journal and then frees them
    /// too: the drain still frees each after its own sync (freeing twice finds it gone), so a copy
    /// goes however the two syncs end.
    var copiesBeforeSync: [String] { draining + copies }

    private mutating func startsDrain() -> Bool {
        guard !isDraining else { return false }
        isDraining = true
        return true
    }

    /// The events and copies queued since the last batch, in order; nil when none is left, which
    /// ends the drain.
    mutating func nextBatch() -> Batch? {
        draining = copies
        guard !pending.isEmpty || !copies.isEmpty else {
            isDraining = false
            return nil
        }
        defer {
            pending = []
            copies = []
        }
        return Batch(events: pending, copies: copies)
    }
}
