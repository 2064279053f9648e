import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// The URLSession delegate: writes bodies to partial files, applies back-pressure, checkpoints,
/// and lands finished files.
///
/// `@unchecked Sendable`: `session` is set once right after init, before any task exists; the
/// tables are behind `state`; per-transfer data follows `TransferContext`'s rules.
final class EngineDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct State {
        var byJob: [String: TransferContext] = [:]
        var byTask: [Int: TransferContext] = [:]
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var stopped: [String: StoppedTransfer] = [:]
        /// Jobs handed to `start` whose context does not exist yet.
        var starting: Set<String> = []
        /// Of those, the ones cancelled before they began.
        var cancelledBeforeStart: Set<String> = []
        /// Set by `stopAll`: transfers that begin from now on stop at once, keeping their files.
        var stoppingAll = false
        /// The running digests of interrupted transfers, so a retry in this run continues them
        /// instead of reading the partial file again.
        var suspended: [String: SuspendedDigest] = [:]
        var isIdle: Bool { byJob.isEmpty && starting.isEmpty }
    }

    private let configuration: EngineConfiguration
    private let hosts: HostGuard
    private let queue: OperationQueue
    private let logger: Logger
    private let events: AsyncStream<EngineEvent>.Continuation
    private let state = Mutex(State())
    /// Syncs partial files off the delegate queue, so a slow disk flush never stalls receiving.
    private let ioQueue = DispatchQueue(label: "transferd.engine.io", attributes: .concurrent)
    weak var session: URLSession?
    private let checkpointIntervalNanoseconds: UInt64
    /// Checks deadlines and low-speed limits once a second.
    private let ticker: any DispatchSourceTimer

    init(
        configuration: EngineConfiguration, hosts: HostGuard, queue: OperationQueue, logger: Logger,
        events: AsyncStream<EngineEvent>.Continuation
    ) {
        self.configuration = configuration
        self.hosts = hosts
        let interval = configuration.checkpointInterval.components
        self.checkpointIntervalNanoseconds = UInt64(max(interval.seconds, 0)) * 1_000_000_000 + UInt64(max(interval.attoseconds, 0) / 1_000_000_000)
        self.queue = queue
        self.logger = logger
        self.events = events
        self.ticker = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "transferd.engine.ticker"))
        super.init()
        ticker.schedule(deadline: .now() + 1, repeating: 1)
        ticker.setEventHandler { [weak self] in
            guard let self else { return }
            self.queue.addOperation { self.checkLimits() }
        }
        ticker.resume()
    }

    deinit {
        ticker.cancel()
    }

    // MARK: - Control from the core

    /// Checks the host, opens the partial file and restores its digest off the delegate queue,
    /// then begins.
    func start(_ request: TransferRequest) {
        let suspended: SuspendedDigest? = state.withLock { state in
            state.starting.insert(request.jobID)
            return state.suspended.removeValue(forKey: request.jobID)
        }
        ioQueue.async {
            // Before every attempt: the rules may have changed, and the name may resolve elsewhere now.
            let preparation: Preparation
            if let refused = self.hostFailure(for: request.url) {
                preparation = .refused(refused)
            } else {
                preparation = .opened(Self.prepare(request, suspended: suspended))
            }
            self.queue.addOperation { self.begin(request, preparation, suspended: suspended) }
        }
    }

    /// Forgets what an interrupted transfer left in memory (the job was cancelled or failed).
    func forget(jobID: String) {
        state.withLock { _ = $0.suspended.removeValue(forKey: jobID) }
    }

    func cancel(jobID: String) -> CancelOutcome {
        let found: TransferContext?? = state.withLock { state in
            if state.starting.contains(jobID) {
                state.cancelledBeforeStart.insert(jobID)
                return .some(nil)
            }
            return state.byJob[jobID].map { .some($0) } ?? nil
        }
        guard let found else { return .notRunning }
        guard let context = found else { return .cancelled }
        return context.control.withLock { control in
            switch control.phase {
            case .landing: return .landing
            case .cancelling: return .cancelled
            case .stopping: return .notRunning
            case .active, .pausing:
                control.phase = .cancelling
                control.task?.cancel()
                return .cancelled
            }
        }
    }

    func stopAll() async -> [String: StoppedTransfer] {
        let contexts = state.withLock { state in
            state.stoppingAll = true
            return Array(state.byJob.values)
        }
        for context in contexts {
            context.control.withLock { control in
                if control.phase == .active || control.phase == .pausing {
                    control.phase = .stopping
                    control.task?.cancel()
                }
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = state.withLock { state in
                if state.isIdle { return true }
                state.stopWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        return state.withLock { $0.stopped }
    }

    func finishEvents() {
        events.finish()
    }

    func progress(jobID: String) -> TransferProgress? {
        guard let context = state.withLock({ $0.byJob[jobID] }) else { return nil }
        return TransferProgress(
            bytes: context.progress.load(ordering: .relaxed),
            bytesPerSecond: context.rate.load(ordering: .relaxed))
    }


    // MARK: - Starting

    private enum BeginDecision {
        case cancelled
        case stopped(kept: Int64)
        case failed(PrepareFailure)
        case refused(TransferFailure)
        case run(TransferContext)
    }

    /// What the steps before an attempt, off the delegate queue, found.
    private enum Preparation {
        /// The host rules refuse the URL (or its name does not resolve): nothing was opened.
        case refused(TransferFailure)
        case opened(Result<PreparedFile, PrepareFailure>)
    }

    /// A partial file opened and cut back to the bytes a transfer continues after, with their digest.
    struct PreparedFile {
        var file: PartialFile
        var offset: Int64
        var digest: FileDigest
        var announcedDigest: AnnouncedDigest?
    }

    /// Why a transfer could not begin, and the partial file to remove if it fails for good.
    struct PrepareFailure: Error {
        var failure: TransferFailure
        /// The partial file, when it was opened.
        var file: PartialFile?
        /// Whether a file found at the partial file's name is someone else's, to be left alone.
        var foundForeignFile = false

        /// Removes what the failed transfer leaves: its open partial file, else whatever is at the
        /// partial file's name, reached from an allowed root without following a link.
        func removePartialFile(_ request: TransferRequest) {
            if let file {
                file.unlink()
            } else if !foundForeignFile {
                PartialFile.remove(request.partialPath, roots: request.allowedRoots)
            }
        }
    }

    /// Opens the destination's directory from its allowed root without following a symbolic link
    /// (checking the owner's access when the daemon writes for another user), opens the partial
    /// file in it (cut back to the resume point) and gets the digest of the bytes it keeps: from
    /// memory after an interruption in this run, else by reading them once.
    static func prepare(_ request: TransferRequest, suspended: SuspendedDigest?) -> Result<PreparedFile, PrepareFailure> {
        let directory: DirectoryHandle
        let destination: DestinationPath
        do throws(DestinationError) {
            destination = try DestinationPath.parse(request.destination, roots: request.allowedRoots)
            directory = try DirectoryWalker.open(destination, access: request.owner?.accessToCheck())
        } catch {
            return .failure(PrepareFailure(failure: refusal(error, request: request), file: nil))
        }
        let file: PartialFile
        let offset: Int64
        do throws(PartialFile.OpenError) {
            (file, offset) = try PartialFile.open(
                in: directory, name: PartialPath.name(for: destination.name, jobID: request.jobID),
                keeping: request.validator == nil ? 0 : request.resumeFrom, owner: request.owner)
        } catch {
            switch error {
            case .io(let error): return .failure(PrepareFailure(failure: diskFailure(error, writing: request.partialPath), file: nil))
            case .foreign(let error): return .failure(PrepareFailure(failure: refusal(error, request: request), file: nil, foundForeignFile: true))
            }
        }
        if let suspended, suspended.bytes == offset, suspended.inode == file.inode {
            return .success(PreparedFile(file: file, offset: offset, digest: suspended.digest, announcedDigest: suspended.announcedDigest))
        }
        do throws(FileIOError) {
            let digest = try FileDigest.ofPrefix(fd: file.fd, path: file.path, length: offset)
            return .success(PreparedFile(file: file, offset: offset, digest: digest, announcedDigest: nil))
        } catch {
            return .failure(PrepareFailure(failure: diskFailure(error, writing: file.path), file: file))
        }
    }

    /// A destination that may no longer be written (a root was removed from the configuration, a
    /// symbolic link or a foreign file appeared, the owner lost access): the job fails.
    static func refusal(_ error: DestinationError, request: TransferRequest) -> TransferFailure {
        .permanent(JobError(code: "disk", message: "cannot write \(request.destination): \(error.message)"))
    }

    /// Runs on the delegate queue. Decides under one lock whether the transfer runs, so a cancel
    /// or a shutdown never falls between "starting" and "running".
    private func begin(_ request: TransferRequest, _ preparation: Preparation, suspended: SuspendedDigest?) {
        let decision: BeginDecision = state.withLock { state in
            state.starting.remove(request.jobID)
            if state.cancelledBeforeStart.remove(request.jobID) != nil { return .cancelled }
            switch preparation {
            case .refused(let failure):
                return .refused(failure)
            case .opened(.failure(let error)):
                return .failed(error)
            case .opened(.success(let prepared)):
                if state.stoppingAll {
                    state.stopped[request.jobID] = StoppedTransfer(bytes: prepared.offset, validator: request.validator, totalBytes: request.totalBytes)
                    return .stopped(kept: prepared.offset)
                }
                let context = TransferContext(
                    request: request, file: prepared.file, offset: prepared.offset, digest: prepared.digest,
                    announcedDigest: prepared.announcedDigest, segmentBytes: configuration.segmentBytes.lowerBound)
                state.byJob[request.jobID] = context
                return .run(context)
            }
        }
        switch decision {
        case .cancelled:
            switch preparation {
            case .opened(.success(let prepared)): prepared.file.unlink()
            case .opened(.failure(let failure)): failure.removePartialFile(request)
            case .refused: PartialFile.remove(request.partialPath, roots: request.allowedRoots)
            }
            events.yield(.stopped(jobID: request.jobID, bytes: 0))
            releaseStopWaitersIfIdle()
        case .stopped(let kept):
            events.yield(.stopped(jobID: request.jobID, bytes: kept))
            releaseStopWaitersIfIdle()
        case .failed(let prepareFailure):
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
            releaseStopWaitersIfIdle()
        case .refused(let failure):
            if failure.retryable {
                // The name did not resolve: the partial file stays as it was for the next attempt.
                if let suspended { state.withLock { $0.suspended[request.jobID] = suspended } }
                let kept = StoppedTransfer(
                    bytes: request.validator == nil ? 0 : request.resumeFrom, validator: request.validator, totalBytes: request.totalBytes)
                events.yield(.interrupted(jobID: request.jobID, error: failure.error, kept: kept, retryAfter: nil))
            } else {
                PartialFile.remove(request.partialPath, roots: request.allowedRoots)
                request.logger.warning("transfer refused by the host rules", metadata: ["error": "\(failure.error.message)"])
                events.yield(.failed(jobID: request.jobID, error: failure.error))
            }
            releaseStopWaitersIfIdle()
        case .run(let context):
            sendRequest(context)
        }
    }

    /// Why the host rules refuse `url`, as the failure of an attempt. Blocks while a name
    /// resolves: call it on `ioQueue`, never on the delegate queue.
    private func hostFailure(for url: URL) -> TransferFailure? {
        switch hosts.verdict(for: url) {
        case .allowed:
            return nil
        case .refused(let message):
            return .permanent(JobError(code: "host_not_allowed", message: "\(Redaction.url(url)) was not fetched: \(message)"))
        case .unresolved(let message):
            return .transient(JobError(code: "dns", message: message))
        }
    }

    /// Runs on the delegate queue. Asks for the body from the context's offset, or, when the
    /// whole representation is already in the partial file, finishes without asking. `redirect`
    /// is where a redirect of the current request leads, when this follows one.
    private func sendRequest(_ context: TransferContext, following redirect: URL? = nil) {
        guard let session else { return }
        if let failure = context.failure {
            end(context, failure)
            return
        }
        if let total = context.totalBytes, context.offset >= total {
            finishReceived(context)
            return
        }
        if redirect == nil {
            context.redirects = 0
            context.credentialsWithheld = false
        }
        let url = redirect ?? context.request.url
        // The one place a URL becomes a task: nothing but http and https ever reaches libcurl, which
        // FoundationNetworking would otherwise let speak FTP and more.
        guard HTTPScheme.isAllowed(url) else {
            end(context, .permanent(JobError(code: "unsupported_url", message: "\(Redaction.url(url)) is not an http or https URL; transferd speaks only http and https")))
            return
        }
        var request = URLRequest(url: url)
        request.httpMethod = "GET"
        // FoundationNetworking restarts this timer whenever bytes arrive: it is an idle timeout. It
        // turns it into whole milliseconds in an Int (so it traps on huge values, and a fraction of a
        // second becomes 0): clamped to whole seconds within the documented range.
        request.timeoutInterval = HTTPScheme.timeout(context.request.limits.idleTimeout)
        for (name, value) in context.request.headers where !(context.credentialsWithheld && Redaction.isSecretName(name)) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        // Byte offsets must mean file offsets.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        // Ask for one bounded segment at a time while the server honours ranges: a request can
        // then never queue more than a segment in memory, however fast the network.
        if context.rangesUsable {
            var end = context.offset + context.segmentBytes - 1
            if let total = context.totalBytes { end = min(end, total - 1) }
            // Ranges stay usable past byte 0 only with a validator (see the 206 case), and a resume
            // without one starts at 0 (see PartialFile.open), so later segments never mix versions.
            request.setValue("bytes=\(context.offset)-\(end)", forHTTPHeaderField: "Range")
            if context.offset > 0, let validator = context.validator {
                request.setValue(validator, forHTTPHeaderField: "If-Range")
            }
        }
        context.segmentPeakBacklog = 0
        let task = session.dataTask(with: request)
        task.taskDescription = context.request.jobID
        context.statusCode = 0
        context.segmentEnd = nil
        context.pendingRedirect = nil
        context.restartFromZero = false
        context.alreadyComplete = false
        context.stallWindowStart = MonotonicClock.nanoseconds()
        context.stallWindowOffset = context.offset
        let proceed: Bool = context.control.withLock { control in
            guard control.phase == .active else { return false }
            control.task = task
            return true
        }
        guard proceed else {
            completeStop(context)
            return
        }
        state.withLock { $0.byTask[task.taskIdentifier] = context }
        task.resume()
    }

    // MARK: - Delegate callbacks (on the delegate queue)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard let context = state.withLock({ $0.byTask[dataTask.taskIdentifier] }) else {
            completionHandler(.cancel)
            return
        }
        // A refused redirect (or a limit) already decided how this attempt ends; a redirect to
        // follow is asked for once this answer (the 3xx) is done.
        guard context.failure == nil, context.pendingRedirect == nil else {
            completionHandler(.cancel)
            return
        }
        guard let http = response as? HTTPURLResponse else {
            context.failure = .permanent(JobError(code: "protocol", message: "the server's answer is not HTTP"))
            completionHandler(.cancel)
            return
        }
        // An interim answer (100 Continue, 103 Early Hints…): the final one follows on the same
        // request, as HTTP says. 101 would switch protocols, which no download asks for.
        if (100...199).contains(http.statusCode), http.statusCode != 101 {
            completionHandler(.allow)
            return
        }
        context.statusCode = http.statusCode
        if let lengths = http.value(forHTTPHeaderField: "Content-Length"), let problem = ContentLength.conflict(lengths) {
            // RFC 9112 §6.3: differing lengths make the framing unknowable; the body cannot be trusted.
            context.failure = .permanent(
                JobError(code: "protocol", message: "\(context.request.url.host ?? "the server") sent \(problem); the answer's length cannot be trusted and nothing was kept"))
            completionHandler(.cancel)
            return
        }
        if let url = http.url, url != context.request.url { context.finalURL = url }
        let contentEncoding = http.value(forHTTPHeaderField: "Content-Encoding")?.lowercased()
        if let contentEncoding, contentEncoding != "identity" {
            context.failure = .permanent(
                JobError(
                    code: "content_encoding",
                    message: "the server sent the body with Content-Encoding \(contentEncoding) although identity was asked for; "
                        + "the bytes would not be the file's bytes"))
            completionHandler(.cancel)
            return
        }
        let length = http.expectedContentLength >= 0 ? http.expectedContentLength : nil
        switch http.statusCode {
        case 200:
            // The server ignores ranges (or the file changed): the body is the whole file.
            context.rangesUsable = false
            if context.offset > 0 {
                // The server ignored the range or the file changed: never append a 200 body.
                do throws(FileIOError) {
                    try startOver(context, because: "the server answered 200 to a resume")
                } catch {
                    context.failure = Self.diskFailure(error, writing: context.file.path)
                    completionHandler(.cancel)
                    return
                }
            }
            context.totalBytes = length
        case 206:
            guard let range = ContentRange(http.value(forHTTPHeaderField: "Content-Range")), range.start == context.offset else {
                // The server's ranges cannot be trusted: fetch the whole file in one piece.
                context.rangesUsable = false
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            guard context.totalBytes == nil || range.total == nil || range.total == context.totalBytes else {
                // Another size: another version of the file.
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            let answered = Self.strongValidator(http)
            if context.offset > 0, let asked = context.validator, answered != asked {
                // The server ignored If-Range and sent a range of a different version.
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            if answered == nil, context.validator == nil, range.end + 1 < (range.total ?? Int64.max) {
                // Without a validator, a later range could come from a changed file: fetch the
                // file in one piece instead of stitching ranges together.
                context.rangesUsable = false
                context.restartFromZero = true
                completionHandler(.cancel)
                return
            }
            context.totalBytes = range.total ?? context.totalBytes
            context.segmentEnd = range.end
        case 416:
            let total = UnsatisfiedRange(http.value(forHTTPHeaderField: "Content-Range"))?.total
            let answered = Self.strongValidator(http)
            let sameVersion = context.validator != nil && (answered == nil || answered == context.validator)
            if let total, total == context.offset, context.offset == 0 || sameVersion {
                // Everything is here already (or the file is empty).
                context.totalBytes = total
                context.alreadyComplete = true
            } else {
                context.restartFromZero = true
                // A server that cannot satisfy a range from byte 0 gets a plain request next.
                if context.offset == 0 { context.rangesUsable = false }
            }
            completionHandler(.cancel)
            return
        default:
            context.failure = Self.statusFailure(http, url: context.request.url)
            completionHandler(.cancel)
            return
        }
        // What the server says the representation's digest is. Content-Digest describes the body
        // sent, which for a 200 (without content coding) is the whole representation.
        if let announced = AnnouncedDigest.parse(http.value(forHTTPHeaderField: "Repr-Digest"), header: "Repr-Digest")
            ?? (http.statusCode == 200 ? AnnouncedDigest.parse(http.value(forHTTPHeaderField: "Content-Digest"), header: "Content-Digest") : nil)
        {
            context.announcedDigest = announced
            if announced.algorithm == .sha512, context.offset == 0, context.digest.current().sha512 == nil {
                context.digest.reset(to: FileDigest(withSHA512: true))
            }
        }
        if let failure = checkSize(context) {
            context.failure = failure
            completionHandler(.cancel)
            return
        }
        let validator = Self.strongValidator(http) ?? context.validator
        // Report the first answer, and any that changes what a resume depends on.
        if !context.reportedResponse || validator != context.validator || context.offset == 0 || http.statusCode == 200 {
            context.reportedResponse = true
            events.yield(
                .responded(
                    jobID: context.request.jobID, totalBytes: context.totalBytes,
                    validator: validator, startOffset: context.offset, partialInode: context.file.inode,
                    generation: context.generation.load(ordering: .sequentiallyConsistent),
                    finalURL: context.finalURL.map(Redaction.url)))
        }
        context.validator = validator
        completionHandler(.allow)
    }

    /// Checks a newly announced size against the client's expectation and the free space.
    private func checkSize(_ context: TransferContext) -> TransferFailure? {
        guard let total = context.totalBytes else { return nil }
        if let expected = context.request.expectedSize, expected != total {
            return .permanent(
                JobError(
                    code: "size_mismatch",
                    message: "the server says \(Redaction.url(context.request.url)) is \(total) bytes, but \(expected) were expected; "
                        + "nothing was kept. Check the URL and the expected size, then submit again"))
        }
        guard !context.checkedSpace else { return nil }
        context.checkedSpace = true
        let directory = context.file.directory.path
        let needed = total - context.offset
        guard let available = context.file.directory.availableBytes(),
            available - context.request.diskReserveBytes < needed
        else { return nil }
        return .transient(
            JobError(
                code: "disk_full",
                message: "\(directory) has \(available) bytes free, but the download needs \(needed) more and "
                    + "\(context.request.diskReserveBytes) are kept free (disk_reserve_bytes); free some space: the job retries"))
    }

    /// Follows a redirect unless it downgrades https to http or exceeds the limit. Credentials
    /// given for one host are not sent to another.
    ///
    /// FoundationNetworking is told not to follow (its completion handler must be called before
    /// anything cancels the task, or it traps, so it cannot wait for a host check that may
    /// resolve a name): once the 3xx answer is done, `follow` checks the target against the host
    /// rules off the delegate queue and asks it with a new request.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard let context = state.withLock({ $0.byTask[task.taskIdentifier] }), let target = request.url else {
            completionHandler(nil)
            return
        }
        context.redirects += 1
        let from = response.url ?? context.request.url
        // Judged on the Location header itself: FoundationNetworking turns some targets (file:…)
        // into a request to the same server before this delegate sees them.
        if let location = response.value(forHTTPHeaderField: "Location"), let scheme = HTTPScheme.foreignScheme(ofLocation: location) {
            context.failure = .permanent(
                JobError(
                    code: "redirect",
                    message: "\(Redaction.url(from)) redirected to a \(scheme.prefix(20)): URL, which was refused: transferd speaks only http and https. "
                        + "Ask the server's owner for an http or https link"))
            completionHandler(nil)
            return
        }
        if context.redirects > configuration.maxRedirects {
            context.failure = .permanent(
                JobError(
                    code: "redirect",
                    message: "\(Redaction.url(context.request.url)) redirected more than \(configuration.maxRedirects) times "
                        + "(last to \(Redaction.url(target))); the server is probably caught in a redirect loop"))
            completionHandler(nil)
            return
        }
        if from.scheme?.lowercased() == "https", target.scheme?.lowercased() != "https" {
            context.failure = .permanent(
                JobError(
                    code: "redirect",
                    message: "\(Redaction.url(from)) redirected to \(Redaction.url(target)), which is not https; "
                        + "transferd does not downgrade a secure download. Submit the http URL yourself if you trust it"))
            completionHandler(nil)
            return
        }
        if target.host?.lowercased() != from.host?.lowercased() || target.port != from.port || target.scheme != from.scheme {
            // Authorization, Cookie and other credential-like headers stay with their origin.
            context.credentialsWithheld = true
        }
        context.pendingRedirect = target
        completionHandler(nil)
    }

    /// Checks a redirect's target against the host rules off the delegate queue (its name may
    /// need resolving), then asks it, unless the transfer was stopped meanwhile.
    private func follow(_ context: TransferContext, to target: URL) {
        ioQueue.async {
            let refused = self.hostFailure(for: target)
            self.queue.addOperation {
                guard context.phase == .active else {
                    self.completeStop(context)
                    return
                }
                if let refused {
                    self.end(context, refused)
                    return
                }
                context.finalURL = target
                self.sendRequest(context, following: target)
            }
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let context = state.withLock({ $0.byTask[dataTask.taskIdentifier] }) else { return }
        let phase = context.phase
        // Only a 200 or 206 body is the file's bytes; an error page after a refused answer
        // (which FoundationNetworking may still deliver) never is.
        guard phase == .active || phase == .pausing || phase == .stopping, context.failure == nil,
            !context.restartFromZero, !context.alreadyComplete,
            context.statusCode == 200 || context.statusCode == 206
        else { return }
        do throws(FileIOError) {
            var failure: FileIOError?
            data.withUnsafeBytes { raw in
                do throws(FileIOError) {
                    try FileIO.writeAll(context.file.fd, raw, path: context.file.path)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        } catch {
            context.failure = Self.diskFailure(error, writing: context.file.path)
            dataTask.cancel()
            return
        }
        context.digest.feed(data)
        setOffset(context, context.offset + Int64(data.count))
        if configuration.writeDelayMicroseconds > 0 { usleep(configuration.writeDelayMicroseconds) }

        let now = MonotonicClock.nanoseconds()
        if now &- context.rateSampleTime >= 1_000_000_000 {
            let elapsed = Double(now &- context.rateSampleTime) / 1e9
            context.rate.store(Int64(Double(context.offset - context.rateSampleOffset) / elapsed), ordering: .relaxed)
            context.rateSampleTime = now
            context.rateSampleOffset = context.offset
        }
        // A checkpoint starts every half of checkpointBytes, so that while one is syncing the bytes
        // not yet durable stay within checkpointBytes: what a crash may cost.
        if context.offset - context.lastCheckpointOffset >= configuration.checkpointBytes / 2
            || now &- context.lastCheckpointTime >= checkpointIntervalNanoseconds
        {
            checkpoint(context, now: now)
        }
        // The backlog moves slowly relative to single chunks: sample it on every 8th.
        context.chunks &+= 1
        guard context.chunks & 7 == 0 else { return }
        let backlog = queue.operationCount + context.digest.pending
        if backlog > context.segmentPeakBacklog { context.segmentPeakBacklog = backlog }
        // Pausing continues with a ranged request, which only a 206 with a validator makes safe.
        if phase == .active, context.statusCode == 206, context.validator != nil, backlog > configuration.backlogHighWater {
            context.control.withLock { control in
                guard control.phase == .active else { return }
                control.phase = .pausing
                control.task?.cancel()
            }
            context.request.logger.debug("pausing a transfer while the disk catches up", metadata: ["offset": "\(context.offset)", "backlog": "\(queue.operationCount)"])
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let context = state.withLock({ $0.byTask.removeValue(forKey: task.taskIdentifier) }) else { return }
        context.control.withLock { $0.task = nil }
        switch context.phase {
        case .pausing:
            resumeWhenDrained(context)
            return
        case .cancelling:
            finishCancelled(context)
            return
        case .stopping:
            finishStopped(context)
            return
        case .landing:
            return
        case .active:
            break
        }
        if context.alreadyComplete {
            finishReceived(context)
            return
        }
        if context.restartFromZero {
            context.restarts += 1
            guard context.restarts <= 3 else {
                fail(context, JobError(code: "protocol", message: "the server's answers to range requests do not agree with each other or with the file; gave up after \(context.restarts) restarts"))
                return
            }
            do throws(FileIOError) {
                try startOver(context, because: "the server's ranged answer did not continue the file")
            } catch {
                end(context, Self.diskFailure(error, writing: context.file.path))
                return
            }
            context.validator = nil
            context.totalBytes = nil
            sendRequest(context)
            return
        }
        if let failure = context.failure {
            end(context, failure)
            return
        }
        if let target = context.pendingRedirect {
            context.pendingRedirect = nil
            follow(context, to: target)
            return
        }
        if let error {
            var failure = Self.networkFailure(error, context: context)
            if let total = context.totalBytes, failure.retryable {
                failure.error.message += " (after \(context.offset) of \(total) bytes)"
            }
            end(context, failure)
            return
        }
        if context.statusCode == 206, let end = context.segmentEnd, context.offset - 1 == end,
            let total = context.totalBytes, context.offset < total
        {
            // One segment done: size the next one by how much piled up during this one.
            adaptSegment(context)
            resumeWhenDrained(context)
            return
        }
        if let total = context.totalBytes, context.offset < total {
            end(
                context,
                .transient(
                    JobError(
                        code: "connection_lost",
                        message: "the connection to \(context.request.url.host ?? "the server") ended after \(context.offset) of \(total) bytes")))
            return
        }
        finishReceived(context)
    }

    /// The body has ended: land the file if it has exactly the announced size.
    private func finishReceived(_ context: TransferContext) {
        if let total = context.totalBytes, total != context.offset {
            fail(
                context,
                JobError(
                    code: "size_mismatch",
                    message: "the server announced \(total) bytes but sent \(context.offset); the file was not kept. "
                        + "Submit the job again; if it keeps happening, the server is sending a damaged response"))
            return
        }
        land(context)
    }

    // MARK: - Progress and checkpoints

    /// Cuts the partial file back to 0 and starts a new generation, so no sync begun for the old
    /// contents is taken as a checkpoint of the new ones.
    private func startOver(_ context: TransferContext, because reason: String) throws(FileIOError) {
        try context.file.truncate(to: 0)
        context.generation.add(1, ordering: .sequentiallyConsistent)
        setOffset(context, 0)
        // A new version: digests announced for the old one no longer apply.
        context.digest.reset(to: FileDigest())
        context.announcedDigest = nil
        context.checkedSpace = false
        context.request.logger.info("starting the download over from byte 0", metadata: ["reason": "\(reason)"])
    }

    private func setOffset(_ context: TransferContext, _ offset: Int64) {
        context.offset = offset
        context.progress.store(offset, ordering: .relaxed)
        if offset < context.lastCheckpointOffset { context.lastCheckpointOffset = offset }
        if offset < context.rateSampleOffset { context.rateSampleOffset = offset }
    }

    /// Syncs the partial file off the delegate queue, then reports the offset as durable.
    private func checkpoint(_ context: TransferContext, now: UInt64) {
        guard !context.checkpointInFlight.exchange(true, ordering: .acquiring) else { return }
        let offset = context.offset
        let file = context.file
        context.lastCheckpointOffset = offset
        context.lastCheckpointTime = now
        let jobID = context.request.jobID
        let generation = context.generation.load(ordering: .sequentiallyConsistent)
        ioQueue.async {
            if Glibc.fdatasync(file.fd) == 0 {
                self.events.yield(.checkpoint(jobID: jobID, bytes: offset, generation: generation))
            } else {
                context.request.logger.warning("cannot sync a partial file", metadata: ["error": "\(FileIOError("fdatasync", file.path))"])
            }
            context.checkpointInFlight.store(false, ordering: .releasing)
        }
    }

    /// Doubles the segment while the disk keeps up with the network, halves it when chunks pile up.
    private func adaptSegment(_ context: TransferContext) {
        let limits = configuration.segmentBytes
        if context.segmentPeakBacklog < configuration.backlogHighWater / 4 {
            context.segmentBytes = min(context.segmentBytes * 2, limits.upperBound)
        } else if context.segmentPeakBacklog > configuration.backlogHighWater {
            context.segmentBytes = max(context.segmentBytes / 2, limits.lowerBound)
        }
    }

    /// Waits, off the delegate queue, for the chunk backlog to drain, then continues with a ranged
    /// request (after a pause, or for the next segment).
    private func resumeWhenDrained(_ context: TransferContext) {
        if queue.operationCount <= configuration.backlogLowWater {
            let resume: Bool = context.control.withLock { control in
                guard control.phase == .pausing || control.phase == .active else { return false }
                control.phase = .active
                return true
            }
            if resume {
                context.request.logger.debug("continuing a paused transfer", metadata: ["offset": "\(context.offset)"])
                sendRequest(context)
            } else {
                completeStop(context)
            }
            return
        }
        ioQueue.asyncAfter(deadline: .now() + .milliseconds(2)) {
            self.queue.addOperation { self.resumeWhenDrained(context) }
        }
    }

    private func completeStop(_ context: TransferContext) {
        switch context.phase {
        case .cancelling: finishCancelled(context)
        default: finishStopped(context)
        }
    }

    // MARK: - Endings

    private func remove(_ context: TransferContext) {
        state.withLock { _ = $0.byJob.removeValue(forKey: context.request.jobID) }
        releaseStopWaitersIfIdle()
    }

    private func releaseStopWaitersIfIdle() {
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { state in
            guard state.isIdle else { return [] }
            defer { state.stopWaiters = [] }
            return state.stopWaiters
        }
        waiters.forEach { $0.resume() }
    }

    private func finishCancelled(_ context: TransferContext) {
        context.file.unlink()
        events.yield(.stopped(jobID: context.request.jobID, bytes: 0))
        remove(context)
    }

    private func finishStopped(_ context: TransferContext) {
        let offset = context.offset
        let kept = Glibc.fdatasync(context.file.fd) == 0 ? offset : context.lastCheckpointOffset
        // Reported here too (not only as an event), so a shutdown records what a resume needs even
        // when the core has not yet applied earlier events.
        let stopped = StoppedTransfer(bytes: kept, validator: context.validator, totalBytes: context.totalBytes)
        state.withLock { $0.stopped[context.request.jobID] = stopped }
        events.yield(.stopped(jobID: context.request.jobID, bytes: kept))
        remove(context)
    }

    /// Ends the attempt: a retryable failure keeps the partial file for the next one.
    private func end(_ context: TransferContext, _ failure: TransferFailure) {
        if failure.retryable {
            interrupt(context, failure)
        } else {
            fail(context, failure.error)
        }
    }

    /// Syncs the partial file and reports how far it got, for a later attempt to continue.
    private func interrupt(_ context: TransferContext, _ failure: TransferFailure) {
        let synced = Glibc.fdatasync(context.file.fd) == 0
        let kept = synced ? context.offset : context.lastCheckpointOffset
        let jobID = context.request.jobID
        if synced {
            let suspended = SuspendedDigest(
                bytes: kept, inode: context.file.inode, digest: context.digest.current(), announcedDigest: context.announcedDigest)
            state.withLock { $0.suspended[jobID] = suspended }
        }
        context.request.logger.info(
            "transfer interrupted", metadata: ["bytes": "\(kept)", "error": "\(failure.error.message)"])
        events.yield(
            .interrupted(
                jobID: jobID, error: failure.error,
                kept: StoppedTransfer(bytes: kept, validator: context.validator, totalBytes: context.totalBytes),
                retryAfter: failure.retryAfter))
        remove(context)
    }

    /// Ends an attempt from outside the delegate callbacks (a deadline or the low-speed limit).
    private func abort(_ context: TransferContext, _ failure: TransferFailure) {
        context.failure = failure
        context.control.withLock { control in
            if control.phase == .active { control.task?.cancel() }
        }
    }

    /// Runs on the delegate queue once a second: fails transfers past their job's deadline and
    /// interrupts those slower than their low-speed limit for its whole window.
    private func checkLimits() {
        let contexts = state.withLock { Array($0.byJob.values) }
        let now = MonotonicClock.nanoseconds()
        let wallClock = Date()
        for context in contexts where context.failure == nil && context.phase == .active {
            if let deadline = context.request.deadline, wallClock >= deadline {
                abort(
                    context,
                    .permanent(
                        JobError(
                            code: "time_limit",
                            message: "the job ran out of time (its maximum time, max_time_seconds, ended at "
                                + "\(WireCoding.formatTimestamp(deadline))); submit it again with a longer limit")))
                continue
            }
            let limits = context.request.limits
            guard limits.lowSpeedBytesPerSecond > 0 else { continue }
            let elapsed = Double(now &- context.stallWindowStart) / 1e9
            guard elapsed >= limits.lowSpeedTime else { continue }
            let rate = Double(context.offset - context.stallWindowOffset) / elapsed
            context.stallWindowStart = now
            context.stallWindowOffset = context.offset
            if rate < Double(limits.lowSpeedBytesPerSecond) {
                abort(
                    context,
                    .transient(
                        JobError(
                            code: "too_slow",
                            message: "\(context.request.url.host ?? "the server") sent \(Int64(rate)) bytes/s over \(Int(elapsed)) s, "
                                + "below the low-speed limit of \(limits.lowSpeedBytesPerSecond) bytes/s (low_speed_bytes_per_second)")))
            }
        }
    }

    private func fail(_ context: TransferContext, _ error: JobError) {
        forget(jobID: context.request.jobID)
        context.file.unlink()
        context.request.logger.warning("transfer failed", metadata: ["error": "\(error.message)"])
        events.yield(.failed(jobID: context.request.jobID, error: error))
        remove(context)
    }

    /// Verifies the file against the expected size and digests, syncs it and moves it to the
    /// destination, off the delegate queue.
    private func land(_ context: TransferContext) {
        let proceed: Bool = context.control.withLock { control in
            guard control.phase == .active else { return false }
            control.phase = .landing
            return true
        }
        guard proceed else {
            completeStop(context)
            return
        }
        let file = context.file
        let request = context.request
        let bytes = context.offset
        let digest = context.digest.current()
        let announced = context.announcedDigest
        ioQueue.async {
            let sha256 = digest.sha256Hex
            if let mismatch = Self.verify(file: file, bytes: bytes, sha256: sha256, digest: digest, announced: announced, request: request) {
                self.fail(context, mismatch)
                return
            }
            if let refused = Self.landingRefusal(file: file, request: request) {
                self.fail(context, refused)
                return
            }
            do throws(FileIOError) {
                // Partial files are private; the landed file gets the mode the daemon's umask allows.
                guard fchmod(file.fd, 0o666 & ~Self.processUmask) == 0 else { throw FileIOError("chmod", file.path) }
                try FileIO.fsync(file.fd, path: file.path)
                try Self.moveIntoPlace(file, named: FileIO.lastComponent(of: request.destination), overwrite: request.overwrite)
                try file.directory.sync()
                self.events.yield(.completed(jobID: request.jobID, bytes: bytes, sha256: sha256))
            } catch {
                file.unlink()
                let jobError: JobError
                if error.errno == EEXIST {
                    jobError = JobError(
                        code: "destination_exists",
                        message: "\(request.destination) appeared while the download ran; it was left alone. "
                            + "Submit again with overwrite to replace it.")
                } else {
                    jobError = Self.diskFailure(error, writing: request.destination).error
                }
                self.events.yield(.failed(jobID: request.jobID, error: jobError))
            }
            self.remove(context)
        }
    }

    /// Why a finished file must not land, if it must not: its size or digest differs from what
    /// the client expects or the server announced.
    private static func verify(
        file: PartialFile, bytes: Int64, sha256: String, digest: FileDigest, announced: AnnouncedDigest?, request: TransferRequest
    ) -> JobError? {
        if let expected = request.expectedSize, expected != bytes {
            return JobError(
                code: "size_mismatch",
                message: "the download is \(bytes) bytes but \(expected) were expected; nothing was written to \(request.destination)")
        }
        if let expected = request.expectedSha256, expected != sha256 {
            return JobError(
                code: "digest_mismatch",
                message: "the downloaded file's SHA-256 is \(sha256) but \(expected) was expected; nothing was written to "
                    + "\(request.destination). Check the expected digest; if it is right, the server sends a different file")
        }
        guard let announced else { return nil }
        var actual: String?
        switch announced.algorithm {
        case .sha256:
            actual = sha256
        case .sha512:
            // Announced only after the first bytes were hashed: read the file once to check it.
            actual = digest.sha512Hex ?? (try? FileDigest.ofPrefix(fd: file.fd, path: file.path, length: bytes, withSHA512: true))?.sha512Hex
        }
        guard let actual, actual != announced.hex else { return nil }
        return JobError(
            code: "digest_mismatch",
            message: "the downloaded file's \(announced.algorithm.rawValue) is \(actual) but the server's \(announced.header) "
                + "says \(announced.hex); the file was damaged on the way or changed meanwhile, and nothing was written to \(request.destination)")
    }

    /// Why a finished file must not be moved to its destination, if it must not: its partial
    /// name no longer refers to it (someone who may write the directory replaced it), or the
    /// destination to overwrite belongs to another user in a sticky directory.
    private static func landingRefusal(file: PartialFile, request: TransferRequest) -> JobError? {
        guard file.isInPlace else {
            return JobError(
                code: "disk",
                message: "the partial file \(file.path) was removed or replaced while the download ran, so nothing was moved to "
                    + "\(request.destination): submit the job again")
        }
        guard request.overwrite, let access = request.owner?.accessToCheck(),
            let existing = file.directory.status(of: FileIO.lastComponent(of: request.destination)),
            let directory = try? file.directory.status(), !access.mayReplace(existing, in: directory)
        else { return nil }
        return JobError(
            code: "disk",
            message: "\(request.destination) appeared while the download ran and belongs to uid \(existing.st_uid) in a sticky directory, "
                + "so only its owner may replace it; it was left alone")
    }

    /// Renames the partial file over the destination, or, without overwrite, links it there
    /// (which fails if the destination exists) and removes the partial name. Both work inside the
    /// directory opened when the transfer started, whatever its path leads to now.
    private static func moveIntoPlace(_ file: PartialFile, named destination: String, overwrite: Bool) throws(FileIOError) {
        let directory = file.directory
        let target = directory.pathOf(destination)
        if overwrite {
            guard renameat(directory.fd, file.name, directory.fd, destination) == 0 else { throw FileIOError("rename", target) }
            return
        }
        if linkat(directory.fd, file.name, directory.fd, destination, 0) == 0 {
            directory.remove(file.name)
            return
        }
        let failure = FileIOError("link", target)
        // Filesystems without hard links (vfat, some FUSE mounts): check, then rename. The window
        // between the two is tiny, and only a file created in it by someone else could be replaced.
        guard [EPERM, EOPNOTSUPP, EMLINK, ENOSYS].contains(failure.errno) else { throw failure }
        guard directory.status(of: destination) == nil else { throw FileIOError("link", target, errno: EEXIST) }
        guard renameat(directory.fd, file.name, directory.fd, destination) == 0 else { throw FileIOError("rename", target) }
    }

    // MARK: - Helpers

    /// The process's umask, read once (reading it means setting it, so never do it concurrently).
    static let processUmask: mode_t = {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }()

    /// A failed disk operation: a full disk or quota may be freed (the job waits and retries);
    /// anything else (EIO, a read-only filesystem, permissions) fails the job.
    static func diskFailure(_ error: FileIOError, writing path: String) -> TransferFailure {
        let hint: String
        switch error.errno {
        case ENOSPC, EDQUOT:
            return .transient(
                JobError(code: "disk_full", message: "cannot write \(path): \(error) (free some space on that filesystem: the job retries)"))
        case EACCES, EPERM: hint = "make the directory writable by the transferd service, then submit again"
        case ENOENT: hint = "the directory was removed: create it again, then submit the job again"
        case EROFS: hint = "the filesystem is read-only: remount it read-write or choose another destination"
        default: hint = "check the disk and the kernel log (dmesg), then submit the job again"
        }
        return .permanent(JobError(code: "disk", message: "cannot write \(path): \(error) (\(hint))"))
    }

    /// An answer other than 200, 206 or 416: retried when the server is overloaded or restarting,
    /// otherwise the job fails.
    static func statusFailure(_ response: HTTPURLResponse, url: URL) -> TransferFailure {
        let status = response.statusCode
        let reason = HTTPURLResponse.localizedString(forStatusCode: status)
        let what = "the server answered \(status) (\(reason)) for \(Redaction.url(url))"
        if HTTPStatusClass.isTransient(status) {
            let retryAfter = RetryAfter.seconds(response.value(forHTTPHeaderField: "Retry-After"))
            return .transient(JobError(code: "http_status", message: what, httpStatus: status), retryAfter: retryAfter)
        }
        let fix: String
        switch status {
        case 401, 403: fix = "check the credentials (--header 'Authorization: …') and that you may fetch it"
        case 404, 410: fix = "check the URL"
        default: fix = "check the URL and the request headers"
        }
        return .permanent(JobError(code: "http_status", message: "\(what): \(fix), then submit again", httpStatus: status))
    }

    /// A request that failed without an HTTP answer. Network trouble is retried; TLS and URL
    /// problems are not.
    static func networkFailure(_ error: any Error, context: TransferContext) -> TransferFailure {
        let host = context.request.url.host ?? "the server"
        let description = (error as NSError).localizedDescription
        switch (error as? URLError)?.code {
        case .timedOut:
            return .transient(
                JobError(
                    code: "timeout",
                    message: "\(host) sent nothing for \(Int(context.request.limits.idleTimeout)) s (the idle timeout, idle_timeout_seconds)"))
        case .cannotFindHost, .dnsLookupFailed:
            return .transient(JobError(code: "dns", message: "cannot resolve \(host): check the host name and this machine's DNS settings"))
        case .cannotConnectToHost:
            return .transient(JobError(code: "connection_refused", message: "cannot connect to \(host): the server refused the connection or is down"))
        case .networkConnectionLost:
            return .transient(JobError(code: "connection_lost", message: "the connection to \(host) was lost: \(description)"))
        case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            return .permanent(
                JobError(
                    code: "tls",
                    message: "the secure connection to \(host) failed: \(description); check the server's certificate and this machine's CA certificates"))
        case .httpTooManyRedirects:
            return .permanent(JobError(code: "redirect", message: "\(host) redirected too many times; the server is probably caught in a redirect loop"))
        case .cannotParseResponse, .badServerResponse:
            return .permanent(JobError(code: "protocol", message: "\(host) sent an answer that is not valid HTTP: \(description)"))
        case .badURL, .unsupportedURL:
            return .permanent(JobError(code: "unsupported_url", message: "\(Redaction.url(context.request.url)) cannot be fetched: \(description)"))
        default:
            // libcurl reports response headers beyond its 100 KiB limit as "out of memory".
            if description.localizedCaseInsensitiveContains("out of memory") {
                return .permanent(
                    JobError(
                        code: "protocol",
                        message: "\(host) sent response headers larger than libcurl accepts (100 KiB per header); "
                            + "the server or a proxy in between is misbehaving: check the URL with curl -I"))
            }
            return .transient(JobError(code: "network", message: "the transfer from \(host) failed: \(description)"))
        }
    }

    /// A strong ETag, else a Last-Modified date (strong enough for If-Range per RFC 9110 when
    /// it is at least a second older than the response's Date; we accept it as the server's word).
    static func strongValidator(_ response: HTTPURLResponse) -> String? {
        if let etag = response.value(forHTTPHeaderField: "ETag"), etag.hasPrefix("\"") {
            return etag
        }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }
}

/// A parsed `Content-Range: bytes */total` header of a 416 answer.
struct UnsatisfiedRange: Equatable {
    var total: Int64

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes */"),
            let total = ContentRange.number(Substring(header.dropFirst(8).trimmingCharacters(in: .whitespaces)))
        else {
            return nil
        }
        self.total = total
    }
}

/// A parsed `Content-Range: bytes first-last/total` header.
struct ContentRange: Equatable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init?(_ header: String?) {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Self.number(bounds[0]), let end = Self.number(bounds[1]),
            start <= end, end < Int64.max
        else { return nil }
        let total: Int64?
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = Self.number(parts[1]), end < value else { return nil }
            total = value
        }
        self.start = start
        self.end = end
        self.total = total
    }

    /// Plain decimal digits that fit an Int64 (no sign, no spaces): a hostile header cannot
    /// smuggle in a negative or overflowing value.
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return Int64(text)
    }
}

/// What an interrupted transfer leaves in memory for its next attempt in this run.
struct SuspendedDigest: Sendable {
    var bytes: Int64
    var inode: UInt64
    var digest: FileDigest
    var announcedDigest: AnnouncedDigest?
}
