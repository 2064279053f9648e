import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TransferProtocol

/// One running transfer inside the engine.
///
/// `@unchecked Sendable`: the plain stored properties are read and written only on the engine's
/// serial delegate queue (the delegate callbacks, and the start and finish steps that run there);
/// what other threads read or change is in `control` (locked) or in atomics.
final class TransferContext: @unchecked Sendable {
    /// Why the transfer is not simply running.
    enum Phase: Equatable {
        case active
        /// Cancelled to let the disk catch up; continues with a ranged request.
        case pausing
        /// Cancelled by the user: the partial file is removed.
        case cancelling
        /// Stopped for shutdown: the partial file is synced and kept.
        case stopping
        /// Moving the file into place: it can no longer be cancelled.
        case landing
    }

    struct Control {
        var phase: Phase = .active
        var task: URLSessionDataTask?
    }

    let request: TransferRequest
    let control = Mutex(Control())
    /// Bytes written so far, for status readers on other threads.
    let progress: Atomic<Int64>
    let rate = Atomic<Int64>(0)
    let checkpointInFlight = Atomic<Bool>(false)
    /// Bumped whenever the partial file is cut back to 0, so a sync that was running for the
    /// old contents does not report them as a checkpoint of the new ones.
    let generation = Atomic<Int>(0)

    var file: PartialFile
    var offset: Int64
    var totalBytes: Int64?
    var validator: String?
    /// Whether requests ask for bounded segments; off once the server shows it ignores ranges.
    var rangesUsable = true
    /// The size of the next segment asked for; adapts between the configured bounds.
    var segmentBytes: Int64
    /// The last byte the server said the current answer sends.
    var segmentEnd: Int64?
    /// The largest delegate-queue backlog seen during the current segment.
    var segmentPeakBacklog = 0
    /// Chunks received, to sample the backlog on some of them only.
    var chunks: UInt = 0
    /// Whether the core has heard about the server's answer.
    var reportedResponse = false
    /// How often this attempt started over from byte 0.
    var restarts = 0
    var statusCode = 0
    /// Set when the answer means the transfer must start over from byte 0.
    var restartFromZero = false
    /// Set when a 416 showed the partial file already holds the whole representation.
    var alreadyComplete = false
    /// Why the current attempt must end; it ends at the next opportunity.
    var failure: TransferFailure?
    /// The digests of the partial file's bytes so far.
    let digest: StreamingDigest
    /// What the server said the file's digest is, for the version being fetched.
    var announcedDigest: AnnouncedDigest?
    /// Whether the free space was checked against the size the server announced.
    var checkedSpace = false
    /// Redirects followed by the current request.
    var redirects = 0
    /// Where the current answer redirects to, once it has been judged worth following.
    var pendingRedirect: URL?
    /// Set once a redirect led to another origin: credential-like headers are not sent there.
    var credentialsWithheld = false
    /// Where the last redirect led, when the answer came from elsewhere than the job's URL.
    var finalURL: URL?
    /// The start of the window the low-speed limit measures: a time and the offset then.
    var stallWindowStart: UInt64
    var stallWindowOffset: Int64
    var lastCheckpointOffset: Int64
    var lastCheckpointTime: UInt64
    var rateSampleTime: UInt64
    var rateSampleOffset: Int64

    init(request: TransferRequest, file: PartialFile, offset: Int64, digest: FileDigest, announcedDigest: AnnouncedDigest?, segmentBytes: Int64) {
        self.segmentBytes = segmentBytes
        self.digest = StreamingDigest(digest)
        self.announcedDigest = announcedDigest
        self.request = request
        self.file = file
        self.offset = offset
        self.progress = Atomic(offset)
        self.totalBytes = request.totalBytes
        self.validator = request.validator
        self.lastCheckpointOffset = offset
        let now = MonotonicClock.nanoseconds()
        self.lastCheckpointTime = now
        self.rateSampleTime = now
        self.rateSampleOffset = offset
        self.stallWindowStart = now
        self.stallWindowOffset = offset
    }

    var phase: Phase { control.withLock { $0.phase } }
}
