import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol

/// Runs downloads: starts them, carries out what each decides (`perform`), and reports how they
/// end. The decisions are `DownloadAttempt`'s about one request and its answer, and
/// `DownloadMachine`'s about the attempt with its helper connections; the URLSession callbacks arrive through
/// `SessionDelegate` (see `DownloadRunner+Callbacks`).
///
/// `@unchecked Sendable`: `session` is set once right after init, before any task exists;
/// everything else is immutable or thread-safe (`DownloadRegistry`, `EngineQueues`).
final class DownloadRunner: @unchecked Sendable {
    let configuration: EngineConfiguration
    let hosts: HostGuard
    let queues: EngineQueues
    let registry: DownloadRegistry
    /// The bandwidth limits, shared by the running transfers; their segments are paced to them.
    let rates: RateGovernor
    let logger: Logger
    let events: AsyncStream<EngineEvent>.Continuation
    /// Landings in one directory at one moment share its syncs.
    let directorySyncs = DirectorySyncs()
    weak var session: URLSession?
    /// Set before the session is invalidated (the engine was released): FoundationNetworking
    /// traps on a task made in an invalidated session, so nothing is sent after it.
    let sessionInvalidated = Atomic<Bool>(false)
    let checkpointIntervalNanoseconds: UInt64

    init(
        configuration: EngineConfiguration, hosts: HostGuard, rates: RateGovernor = RateGovernor(), queues: EngineQueues,
        tasks: EngineTasks, logger: Logger, events: AsyncStream<EngineEvent>.Continuation
    ) {
        self.rates = rates
        self.registry = DownloadRegistry(rates: rates, tasks: tasks)
        self.configuration = configuration
        self.hosts = hosts
        self.queues = queues
        self.logger = logger
        self.events = events
        let interval = configuration.checkpointInterval.components
        self.checkpointIntervalNanoseconds =
            UInt64(max(interval.seconds, 0)) * 1_000_000_000 + UInt64(max(interval.attoseconds, 0) / 1_000_000_000)
    }

    // MARK: - Control from the core

    /// Checks the host, opens the partial file and restores its digest on the I/O queue, then begins.
    func start(_ request: TransferRequest) {
        let suspended = registry.beginStarting(request.jobID)
        queues.onIO {
            let outcome = TransferPreparation.run(request, hosts: self.hosts, suspended: suspended)
            self.queues.onDelegate { self.begin(request, outcome, suspended: suspended) }
        }
    }

    /// Cancels a transfer: the answer comes at once from its end's claim; the cancel itself
    /// reaches its machine on the delegate queue.
    func cancel(jobID: String) -> CancelOutcome {
        guard let found = registry.roster.claim(jobID, for: .cancel) else { return .notRunning }
        guard let context = found else { return .cancelled }
        let held = context.endClaim.take(.cancel)
        if held == .open { post(.cancel, to: context) }
        return held.cancelOutcome
    }

    /// Stops one transfer as shutdown would, keeping its synced partial file.
    func stop(jobID: String, reason: StopReason) -> StopOutcome {
        guard let found = registry.roster.claim(jobID, for: reason) else { return .notRunning }
        guard let context = found else { return .stopping }
        let held = context.endClaim.take(.stop)
        if held == .open { post(.stop(reason), to: context) }
        return held.stopOutcome
    }

    func stopAll() async -> [String: StoppedTransfer] {
        for context in registry.roster.beginStoppingAll() where context.endClaim.take(.stop) == .open {
            post(.stop(.shutdown), to: context)
        }
        return await registry.waitUntilIdle()
    }

    /// Hands an input from another thread to the transfer's machine, on the delegate queue, before
    /// the chunks waiting there: a cancelled transfer writes none of them.
    private func post(_ input: DownloadMachine.Input, to context: DownloadContext) {
        queues.onDelegateFirst { self.feed(input, context) }
    }

    func progress(jobID: String) -> TransferProgress? {
        guard let context = registry.roster.context(forJob: jobID) else { return nil }
        let paced = rates.rate(for: jobID)
        return TransferProgress(
            bytes: context.sink.progress.load(ordering: .relaxed), bytesPerSecond: context.sink.rate.load(ordering: .relaxed),
            pacedRate: paced, limitUnheld: paced != nil && context.rangesUnusable.load(ordering: .relaxed))
    }

    // MARK: - Beginning (delegate queue)

    /// Decides whether a prepared transfer runs, then sends its first request.
    func begin(_ request: TransferRequest, _ outcome: TransferPreparation.Outcome, suspended: SuspendedDigest?) {
        queues.assertOnDelegate()
        var prepared: TransferPreparation.PreparedFile?
        if case .opened(.success(let file)) = outcome { prepared = file }
        let stoppedAs = prepared.map {
            StoppedTransfer(bytes: $0.offset, validator: request.validator, totalBytes: request.totalBytes, parts: $0.keptParts)
        }
        switch registry.decideStart(request.jobID, stoppedAs: stoppedAs, make: { prepared.map { makeContext(request, $0) } }) {
        case .run(let context):
            perform(context.machine.attempt.proceed(), context)
            return
        case .stoppedBeforeStart(.cancel):
            switch outcome {
            case .opened(.success(let prepared)): prepared.file.unlink()
            case .opened(.failure(let failure)): failure.removePartialFile(request)
            case .refused: PartialFile.remove(request.partialPath, roots: request.allowedRoots)
            }
            events.yield(.stopped(jobID: request.jobID, bytes: 0, reason: .cancel))
        case .stoppedBeforeStart(let reason):
            // Nothing was written: what the last checkpoint holds is still there for the next start.
            events.yield(.stopped(jobID: request.jobID, bytes: stoppedAs?.bytes ?? request.resumeFrom, reason: reason))
        case .stoppingAll:
            events.yield(.stopped(jobID: request.jobID, bytes: stoppedAs?.bytes ?? 0, reason: .shutdown))
        case .none:
            refuse(request, outcome, suspended: suspended)
        }
        registry.remove(request.jobID)
    }

    private func makeContext(_ request: TransferRequest, _ prepared: TransferPreparation.PreparedFile) -> DownloadContext {
        var request = request
        request.conditionalHeaders = prepared.conditionalHeaders
        let settings = DownloadAttempt.Settings(
            url: request.url, expectedSize: request.expectedSize, diskReserveBytes: request.diskReserveBytes,
            maxRedirects: configuration.maxRedirects)
        rates.join(request.jobID, limit: request.limitRate, bandwidthClass: request.bandwidthClass)
        // A paced transfer asks for segments of about a quarter second's worth from the first one.
        let paced = RatePacer.segmentBytes(for: rates.rate(for: request.jobID), upTo: configuration.segmentBytes.upperBound)
        let attempt = DownloadAttempt(
            settings: settings, offset: prepared.offset, totalBytes: request.totalBytes, validator: request.validator,
            announcedDigest: prepared.announcedDigest, segmentBytes: paced ?? configuration.segmentBytes.lowerBound)
        let sink = ByteSink(file: prepared.file, offset: prepared.offset, digest: prepared.digest)
        let machine = DownloadMachine(
            attempt: attempt, keptParts: prepared.keptParts, connections: request.segments, now: MonotonicClock.nanoseconds())
        return DownloadContext(request: request, machine: machine, sink: sink, queues: queues)
    }

    /// A transfer that could not begin: the host rules refused it or its file could not be prepared.
    private func refuse(_ request: TransferRequest, _ outcome: TransferPreparation.Outcome, suspended: SuspendedDigest?) {
        switch outcome {
        case .opened(.success):
            return
        case .opened(.failure(let prepareFailure)):
            let failure = prepareFailure.failure
            if failure.retryable {
                events.yield(
                    .interrupted(
                        jobID: request.jobID, error: failure.error,
                        kept: StoppedTransfer(bytes: 0, validator: nil, totalBytes: request.totalBytes), retryAfter: nil))
            } else {
                prepareFailure.removePartialFile(request)
                events.yield(.failed(jobID: request.jobID, error: failure.error))
            }
        case .refused(let failure):
            if failure.retryable {
                // The name did not resolve: the partial file stays as it was for the next attempt.
                if let suspended { registry.suspend(request.jobID, suspended) }
                let kept = StoppedTransfer(
                    bytes: request.validator == nil ? 0 : request.resumeFrom, validator: request.validator, totalBytes: request.totalBytes)
                events.yield(.interrupted(jobID: request.jobID, error: failure.error, kept: kept, retryAfter: nil))
            } else {
                PartialFile.remove(request.partialPath, roots: request.allowedRoots)
                request.logger.warning("transfer refused by the host rules", metadata: ["error": "\(failure.error.message)"])
                events.yield(.failed(jobID: request.jobID, error: failure.error))
            }
        }
    }
}
