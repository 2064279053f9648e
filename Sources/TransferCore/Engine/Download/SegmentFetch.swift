import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The helper connections of one download over several (`segments` > 1): their requests, and
/// the plan that shares the file out between them and the attempt (`SegmentPlan`).
///
/// `@unchecked Sendable`: used only on the engine's delegate queue; other threads cancel the
/// helpers' requests through the context's `control`.
final class SegmentFetch: @unchecked Sendable {
    struct Helper {
        /// The start of the part it fetches (the part's key in the plan).
        var part: Int64
        /// Where the current request's next byte goes, and where the request ends (exclusive).
        var offset: Int64
        var end: Int64
        /// Whether the current request's answer was checked and its body is the file's.
        var accepted = false
        /// Whether its request was cancelled to let the delegate queue's backlog drain: it
        /// continues its part once it has.
        var drainPaused = false
    }

    var plan: SegmentPlan
    /// Helpers at most: the job's segments less the attempt's own connection.
    let width: Int
    var helpers: [Int: Helper] = [:]
    /// Every helper request not yet ended, even after the helpers closed: a callback of one of
    /// these is never the attempt's.
    var workerByTask: [Int: Int] = [:]
    var nextWorker = 0
    var failures = 0
    /// Set when the transfer ends, stops or starts over: helpers' bytes arriving later are dropped.
    var closed = false
    /// Set when a helper's answer did not fit the file (no range, another version): no new helpers.
    var refused = false
    /// A part the attempt is taking into the digest: still in the file past the attempt's offset.
    var absorbing: ByteRange?
    /// The ranges the last checkpoint recorded.
    var lastCheckpointParts: [ByteRange] = []

    init(plan: SegmentPlan, width: Int) {
        self.plan = plan
        self.width = width
    }

    /// The ranges past the attempt's offset in the file, for a checkpoint.
    var ranges: [ByteRange] {
        var ranges = plan.ranges
        if let absorbing, absorbing.count > 0 { ranges.insert(absorbing, at: 0) }
        return ranges
    }

    var bytesAhead: Int64 { plan.bytesAhead + (absorbing?.count ?? 0) }
}
