import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
public import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The one `URLSession` of the daemon and what it writes to disk.
///
/// Downloads are data tasks whose delegate streams bytes into a partial file beside the
/// destination. FoundationNetworking queues received chunks to the delegate queue without limit,
/// and `suspend()` would restart a request from byte 0, so back-pressure works by cancelling a
/// task when too many chunks wait and continuing with a ranged request once they have drained.
/// The engine never writes the journal: it reports `EngineEvent`s and the core decides.
public final class TransferEngine: TransferDriving {
    private let session: URLSession
    private let runner: DownloadRunner
    private let uploads: UploadRunner
    private let monitor: LimitsMonitor
    /// The host rules every submit, attempt and redirect is checked against; the daemon replaces
    /// them on reload.
    public let hosts: HostGuard

    /// Events about every transfer, in order per job.
    public let events: AsyncStream<EngineEvent>

    /// The bandwidth limits the transfers are paced to; the daemon replaces their policy on reload.
    public let rates: RateGovernor

    public init(configuration: EngineConfiguration, hosts: HostGuard = HostGuard(), rates: RateGovernor = RateGovernor(), logger: Logger) {
        _ = Landing.processUmask
        let (events, continuation) = AsyncStream.makeStream(of: EngineEvent.self)
        self.events = events
        let queues = EngineQueues(logger: logger)
        self.rates = rates
        let tasks = EngineTasks()
        let runner = DownloadRunner(
            configuration: configuration, hosts: hosts, rates: rates, queues: queues, tasks: tasks, logger: logger, events: continuation)
        self.runner = runner
        let uploads = UploadRunner(configuration: configuration, hosts: hosts, rates: rates, queues: queues, tasks: tasks, events: continuation)
        self.uploads = uploads
        monitor = LimitsMonitor(runner: runner, uploads: uploads)
        // A lifted or raised limit holds at once for the transfers waiting for their pace. On the
        // delegate queue: a transfer joins the limits while the registry's lock is held.
        rates.observe { [weak runner, weak uploads] in
            queues.onDelegate { [runner, uploads] in
                runner?.ratesChanged()
                uploads?.ratesChanged()
            }
        }
        self.hosts = hosts
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // No response cache (FoundationNetworking's would keep one under $HOME) and no cookies.
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        // A job's own User-Agent header, when it sets one, wins over this.
        sessionConfiguration.httpAdditionalHeaders = ["User-Agent": "transferd/\(transferdVersion)"]
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.httpShouldSetCookies = false
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        sessionConfiguration.timeoutIntervalForRequest = HTTPScheme.timeout(configuration.idleTimeout)
        sessionConfiguration.timeoutIntervalForResource = 7 * 24 * 3600
        session = URLSession(configuration: sessionConfiguration, delegate: SessionDelegate(runner: runner, uploads: uploads, tasks: tasks), delegateQueue: queues.delegate)
        runner.session = session
        uploads.session = session
    }

    /// Starts a transfer; its outcome arrives as events.
    public func start(_ request: TransferRequest) {
        switch request.kind {
        case .download: runner.start(request)
        case .upload(let plan): uploads.start(request, plan)
        }
    }

    /// Cancels a transfer and removes its partial file, unless it is already landing at its
    /// destination (it will complete) or has just ended.
    public func cancel(jobID: String) -> CancelOutcome {
        uploads.cancel(jobID: jobID) ?? runner.cancel(jobID: jobID)
    }

    /// Stops one transfer the way shutdown does: the partial file is synced and kept, and
    /// `.stopped` reports the bytes it holds, so a later start continues from them.
    public func stop(jobID: String, reason: StopReason) -> StopOutcome {
        uploads.stop(jobID: jobID, reason: reason) ?? runner.stop(jobID: jobID, reason: reason)
    }

    /// Drops what an interrupted transfer kept in memory for its next attempt (its job was
    /// cancelled or failed while waiting).
    public func forget(jobID: String) {
        runner.registry.forget(jobID)
    }

    /// Stops every transfer, syncing each partial file, and returns how far each got.
    public func stopAll() async -> [String: StoppedTransfer] {
        // A stopped upload keeps nothing: it is sent again from byte 0 after the restart.
        async let uploadsStopped: Void = uploads.stopAll()
        let stopped = await runner.stopAll()
        await uploadsStopped
        return stopped
    }

    /// Ends `events` after what was already reported; call once transfers are stopped.
    public func finishEvents() {
        runner.events.finish()
    }

    /// Live progress of a running transfer.
    public func progress(jobID: String) -> TransferProgress? {
        uploads.progress(jobID: jobID) ?? runner.progress(jobID: jobID)
    }

    public func terminateUpload(_ termination: UploadTermination) {
        uploads.terminate(termination)
    }

    deinit {
        runner.sessionInvalidated.store(true, ordering: .releasing)
        session.invalidateAndCancel()
    }
}

/// What the core needs of an engine: start, stop and watch transfers, and hear how they end. The
/// daemon's is `TransferEngine` (the one `URLSession`); tests and the fuzz targets script one.
public protocol TransferDriving: Sendable {
    /// The host rules every submit, attempt and redirect is checked against.
    var hosts: HostGuard { get }
    /// Events about every transfer, in order per job.
    var events: AsyncStream<EngineEvent> { get }
    /// Starts a transfer; its outcome arrives as events.
    func start(_ request: TransferRequest)
    /// Cancels a transfer, unless it is landing or has just ended.
    func cancel(jobID: String) -> CancelOutcome
    /// Stops one transfer keeping its synced partial file (a pause); `.stopped` reports how far it got.
    func stop(jobID: String, reason: StopReason) -> StopOutcome
    /// Drops what an interrupted transfer kept in memory for its next attempt.
    func forget(jobID: String)
    /// Stops every transfer and returns how far each got.
    func stopAll() async -> [String: StoppedTransfer]
    /// Ends `events` after what was already reported.
    func finishEvents()
    /// Live progress of a running transfer.
    func progress(jobID: String) -> TransferProgress?
    /// Asks the server to drop the resource of a resumable upload that ended without completing
    /// (cancelled, or failed for good); nothing waits for the answer.
    func terminateUpload(_ termination: UploadTermination)
}

extension TransferDriving {
    public func terminateUpload(_ termination: UploadTermination) {}
}

