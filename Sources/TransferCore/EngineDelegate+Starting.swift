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

extension EngineDelegate {
    // MARK: - Starting

    enum BeginDecision {
        case cancelled
        case stopped(kept: Int64)
        case failed(PrepareFailure)
        case refused(TransferFailure)
        case run(TransferContext)
    }

    /// What the steps before an attempt, off the delegate queue, found.
    enum Preparation {
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
    func begin(_ request: TransferRequest, _ preparation: Preparation, suspended: SuspendedDigest?) {
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
    func hostFailure(for url: URL) -> TransferFailure? {
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
    func sendRequest(_ context: TransferContext, following redirect: URL? = nil) {
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
}
