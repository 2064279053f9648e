import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One running upload inside the engine: its job, its machine (every decision and the state they
/// rest on), the request in flight, and the counters other threads read for progress.
///
/// `@unchecked Sendable`: `machine` and `task` are read and written only on the
/// engine's delegate queue, where every input to the machine arrives (a stop or a cancel from the
/// core is posted there); what other threads read is in atomics.
final class UploadContext: @unchecked Sendable {
    let request: TransferRequest
    let plan: UploadPlan
    var machine: UploadMachine
    /// The request in flight (delegate queue only): the machine's `cancelRequest` cancels it.
    var task: URLSessionTask?
    /// Bytes of the file sent so far by the request in flight, the bytes the server held before
    /// it (a resumable upload's offset), and when the attempt began, for progress and rate.
    let sent = Atomic<Int64>(0)
    let base = Atomic<Int64>(0)
    /// The server's offset when this attempt's first body began (-1 before): the rate counts only what the attempt sent.
    private let firstBase = Atomic<Int64>(-1)
    let startedAt = MonotonicClock.nanoseconds()
    /// Set once the upload sends the whole file in one request: then a rate limit cannot be held.
    let sendsWholeFile = Atomic<Bool>(false)
    /// Set (on the delegate queue) once the machine decided how the upload ends: a stop from the
    /// core after that finds nothing to stop.
    let closing = Atomic<Bool>(false)
    /// An append's wait for its pace (the machine's `wake`).
    let wakeup: Wakeup

    init(request: TransferRequest, plan: UploadPlan, attempt: UploadAttempt, queues: EngineQueues) {
        self.request = request
        self.plan = plan
        self.machine = UploadMachine(attempt: attempt)
        self.wakeup = Wakeup(queues: queues)
    }

    /// A request begins with the server holding `offset` bytes.
    func beginRequest(at offset: Int64) {
        sent.store(0, ordering: .relaxed)
        base.store(offset, ordering: .relaxed)
        _ = firstBase.compareExchange(expected: -1, desired: offset, ordering: .relaxed)
    }

    /// Bytes of the file the server holds or is being sent now.
    var bytesSoFar: Int64 { base.load(ordering: .relaxed) + sent.load(ordering: .relaxed) }

    var progress: TransferProgress {
        let bytes = sent.load(ordering: .relaxed)
        let elapsed = max(MonotonicClock.nanoseconds() &- startedAt, 1)
        // The rate counts what this attempt sent: not the bytes the server held before it.
        let sentInAttempt = max(0, bytes + base.load(ordering: .relaxed) - max(firstBase.load(ordering: .relaxed), 0))
        return TransferProgress(
            bytes: base.load(ordering: .relaxed) + bytes, bytesPerSecond: Int64(Double(sentInAttempt) * 1e9 / Double(elapsed)))
    }
}
