/// How a download over several connections shares its file out, as a value: which ranges the
/// helper connections fetch ahead of the attempt's own requests, how far each got, and what the
/// attempt does when it reaches them. It performs no I/O.
///
/// The attempt (the lead) fetches the file from its offset up to `leadEnd`, one segment after the
/// other as without helpers; its offset stays the end of the bytes known contiguous from 0, which
/// the digest has seen in order and a checkpoint records. The rest of the file, `leadEnd..<total`,
/// is cut into parts that cover it without gaps, in order. A helper fetches one part from its
/// `done` towards its `end`; a helper with nothing left takes a part nobody fetches, or splits the
/// largest range still to fetch (the lead's or a part's) in two and takes the second half, as
/// aria2 does. When the lead reaches a part, it takes the part's bytes into the digest
/// (`leadArrived`) and goes on after them: past a finished part, from its `done` when nobody
/// fetches the rest, or it waits for the part's helper.
struct SegmentPlan: Sendable, Equatable {
    struct Part: Sendable, Equatable {
        var start: Int64
        /// Bytes `start..<done` are in the file.
        var done: Int64
        /// The part ends here: the next part (or the file's end) begins.
        var end: Int64
        /// The helper fetching it; nil when none does (it is finished, its helper gave up, or it
        /// was kept by a restart).
        var worker: Int?
        /// Where the helper's current request ends: a split never cuts below it.
        var asked: Int64

        var isFinished: Bool { done == end }
    }

    /// What the lead does on reaching `leadEnd`.
    enum LeadStep: Equatable, Sendable {
        /// The whole file is behind it.
        case finished
        /// Take `range` (the next part's bytes already in the file, maybe none) into the digest,
        /// then go on from its end with `leadEnd` moved on.
        case absorb(ByteRange)
        /// The part ahead is still being fetched by a helper: ask again later.
        case wait
    }

    let total: Int64
    /// No range smaller than this is split off for a helper.
    let minimumSplit: Int64
    /// Where the lead's range ends: the first part's start, or the file's end.
    private(set) var leadEnd: Int64
    /// Disjoint and in order, covering `leadEnd..<total`.
    private(set) var parts: [Part] = []

    /// A plan for a file of `total` bytes whose first `prefix` are in the file, as are `kept`
    /// ranges past it (from an earlier attempt).
    init(total: Int64, prefix: Int64, kept: [ByteRange], minimumSplit: Int64) {
        self.total = total
        self.minimumSplit = max(minimumSplit, 1)
        let ranges = kept.filter { $0.start > prefix && $0.end > $0.start && $0.end <= total }.sorted { $0.start < $1.start }
        var usable: [ByteRange] = []
        for range in ranges where range.start >= (usable.last?.end ?? prefix) { usable.append(range) }
        leadEnd = usable.first?.start ?? total
        for (index, range) in usable.enumerated() {
            let end = index + 1 < usable.count ? usable[index + 1].start : total
            parts.append(Part(start: range.start, done: range.end, end: end, worker: nil, asked: range.end))
        }
    }

    /// The ranges past the lead's offset that are in the file: what a checkpoint records besides it.
    var ranges: [ByteRange] {
        parts.compactMap { $0.done > $0.start ? ByteRange(start: $0.start, end: $0.done) : nil }
    }

    /// Bytes in the file past the lead's offset.
    var bytesAhead: Int64 { parts.reduce(0) { $0 + $1.done - $1.start } }

    func part(of worker: Int) -> Part? {
        parts.first { $0.worker == worker }
    }

    // MARK: - Helpers

    /// Gives `worker` a range to fetch: a part nobody fetches, else the second half of the largest
    /// range still to fetch, split off. `leadFrom` is where the lead's current request ends (or its
    /// offset when none is out). Returns the part's start, or nil when nothing is worth splitting.
    mutating func assign(_ worker: Int, leadFrom: Int64) -> Int64? {
        if let index = parts.firstIndex(where: { $0.worker == nil && !$0.isFinished }) {
            parts[index].worker = worker
            parts[index].asked = parts[index].done
            return parts[index].start
        }
        // The largest range nobody asked for yet: the lead's rest or a part's.
        var best: (index: Int?, from: Int64, to: Int64) = (nil, leadFrom, leadEnd)
        for (index, part) in parts.enumerated() where part.worker != nil {
            let from = max(part.done, part.asked)
            if part.end - from > best.to - best.from { best = (index, from, part.end) }
        }
        guard best.to - best.from >= 2 * minimumSplit else { return nil }
        // Cut on a 64 KiB boundary, so both halves cover whole pages.
        let middle = (best.from + (best.to - best.from) / 2) & ~Int64(0xFFFF)
        guard middle > best.from, middle < best.to else { return nil }
        let split = Part(start: middle, done: middle, end: best.to, worker: worker, asked: middle)
        if let index = best.index {
            parts[index].end = middle
            parts.insert(split, at: index + 1)
        } else {
            leadEnd = middle
            parts.insert(split, at: 0)
        }
        return middle
    }

    /// The helper of the part at `start` asked for its bytes up to `end` (exclusive).
    mutating func asked(_ start: Int64, upTo end: Int64) {
        guard let index = index(of: start) else { return }
        parts[index].asked = min(end, parts[index].end)
    }

    /// The helper of the part at `start` wrote `count` more of its bytes. A finished part has no
    /// helper any more: its helper is free for another.
    mutating func wrote(_ start: Int64, _ count: Int64) {
        guard let index = index(of: start) else { return }
        parts[index].done = min(parts[index].done + count, parts[index].end)
        if parts[index].isFinished { parts[index].worker = nil }
    }

    /// `worker` stops fetching its part (it failed or gave up); the lead or another helper fetches the rest.
    mutating func release(_ worker: Int) {
        guard let index = parts.firstIndex(where: { $0.worker == worker }) else { return }
        parts[index].worker = nil
        parts[index].asked = parts[index].done
    }

    // MARK: - The lead

    /// Whether the lead, at `leadEnd`, may go on: the part there is finished or nobody fetches it
    /// (`leadArrived` says other than `.wait`).
    var leadMayGoOn: Bool {
        guard let part = parts.first else { return true }
        return part.isFinished || part.worker == nil
    }

    /// The lead's offset reached `leadEnd`: what it does next.
    mutating func leadArrived() -> LeadStep {
        guard let part = parts.first else { return .finished }
        guard leadMayGoOn else { return .wait }
        parts.removeFirst()
        leadEnd = part.end
        return .absorb(ByteRange(start: part.start, end: part.done))
    }

    private func index(of start: Int64) -> Int? {
        parts.firstIndex { $0.start == start }
    }
}
