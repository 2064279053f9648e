import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// One running transfer inside the engine: its request, its machine (its state and every
/// decision), its partial file, its requests in flight, and who ends it.
///
/// `@unchecked Sendable`: `machine`, `task`, `helperTasks` and `stamp` are read and written only
/// on the engine's delegate queue, where every input to the machine arrives (a stop or a cancel
/// from the core is posted there once it claimed the end); what other threads read or change is
/// in `endClaim` and in the sink's atomics.
final class DownloadContext: @unchecked Sendable {
    let request: TransferRequest
    /// Who ends the transfer, taken once: what a cancel or a stop from the core answers at once.
    let endClaim = EndClaim()
    /// Where the transfer is and what the attempt and its helper connections decided so far.
    var machine: DownloadMachine
    let sink: ByteSink
    /// The attempt's request in flight, and the helper connections' (`HelperConnections`).
    var task: URLSessionDataTask?
    var helperTasks: [Int: URLSessionDataTask] = [:]
    /// Set once the server showed it ignores ranges: then a rate limit cannot be held.
    let rangesUnusable = Atomic<Bool>(false)
    /// A conditional download's validators from the server, stamped on the landed file.
    var stamp: ConditionalGet.Stamp?
    /// The attempt's wait between requests: for its pace, or for a helper's part.
    let wakeup: Wakeup

    init(request: TransferRequest, machine: DownloadMachine, sink: ByteSink, queues: EngineQueues) {
        self.request = request
        self.machine = machine
        self.sink = sink
        self.wakeup = Wakeup(queues: queues)
    }

    /// Cancels the attempt's request and every helper's, and ends a wait between requests.
    func cancelRequests() {
        task?.cancel()
        for helper in helperTasks.values { helper.cancel() }
        wakeup.wake()
    }
}
