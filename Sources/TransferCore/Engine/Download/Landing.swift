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

extension DownloadRunner {
    /// Verifies the file against the expected size and digests, syncs it and moves it to the
    /// destination, off the delegate queue.
    func land(_ context: DownloadContext) {
        queues.assertOnDelegate()
        closeHelpers(context)
        do throws(FileIOError) {
            try context.sink.flush()
        } catch {
            let failure = FailureClassifier.disk(error, writing: context.sink.file.path)
            guard endsOwn(context) else { return }
            if failure.retryable { interrupt(context, failure) } else { fail(context, failure.error) }
            return
        }
        guard endsOwn(context, claim: .landing) else { return }
        let file = context.sink.file
        let request = context.request
        let bytes = context.machine.attempt.offset
        let digest = context.sink.digest.current()
        let announced = context.machine.attempt.announcedDigest
        let stamp = context.stamp
        queues.onLanding {
            self.queues.assertOnLanding()
            let sha256 = digest.sha256Hex
            if let refused = Landing.verify(file: file, bytes: bytes, sha256: sha256, digest: digest, announced: announced, request: request)
                ?? Landing.refusal(file: file, request: request)
            {
                // The transfer's state is the delegate queue's: the failure is reported there.
                self.queues.onDelegate { self.fail(context, refused) }
                return
            }
            do throws(FileIOError) {
                // Partial files are private; the landed file gets the mode the daemon's umask allows.
                guard fchmod(file.fd, 0o666 & ~Landing.processUmask) == 0 else { throw FileIOError("chmod", file.path) }
                stamp?.apply(to: file.fd)
                try FileIO.fsync(file.fd, path: file.path)
                try Landing.moveIntoPlace(file, named: FileIO.lastComponent(of: request.destination), overwrite: request.overwrite)
            } catch {
                self.landed(request, file: file, bytes: bytes, outcome: .failure(error))
                return
            }
            // Durable once a sync of the directory that began after the move has ended; landings
            // in the same directory meanwhile share it.
            self.directorySyncs.sync(file.directory) { synced in
                self.landed(request, file: file, bytes: bytes, outcome: synced.map { sha256 })
            }
        }
    }

    /// Reports how a landing ended: `.completed` once the file is durable at its destination,
    /// else `.failed` (the partial name removed), and lets the transfer go.
    private func landed(_ request: TransferRequest, file: PartialFile, bytes: Int64, outcome: Result<String, FileIOError>) {
        switch outcome {
        case .success(let sha256):
            events.yield(.completed(jobID: request.jobID, bytes: bytes, sha256: sha256))
        case .failure(let error):
            file.unlink()
            events.yield(.failed(jobID: request.jobID, error: Landing.failure(error, file: file, request: request)))
        }
        registry.remove(request.jobID)
        HeapPolicy.transferEnded(bytes: bytes)
    }
}

/// Landing a finished file: the checks before it may replace anything, and the move into place.
enum Landing {
    /// The process's umask, read once (reading it means setting it, so never do it concurrently).
    static let processUmask: mode_t = {
        let mask = umask(0o022)
        umask(mask)
        return mask
    }()

    /// What a landing that failed at `error` tells the job.
    static func failure(_ error: FileIOError, file: PartialFile, request: TransferRequest) -> JobError {
        if error.errno == EEXIST {
            return JobError(
                code: .destinationExists,
                message: "\(request.destination) appeared while the download ran; it was left alone. "
                    + "Submit again with overwrite to replace it.")
        }
        if error.errno == EPERM || error.errno == EACCES, let sticky = Landing.stickyRefusal(
            in: file.directory, name: FileIO.lastComponent(of: request.destination), destination: request.destination)
        {
            return sticky
        }
        return FailureClassifier.disk(error, writing: request.destination).error
    }

    /// Why a finished file must not land, if it must not: its size or digest differs from what
    /// the client expects or the server announced.
    static func verify(
        file: PartialFile, bytes: Int64, sha256: String, digest: FileDigest, announced: AnnouncedDigest?, request: TransferRequest
    ) -> JobError? {
        if let expected = request.expectedSize, expected != bytes {
            return JobError(
                code: .sizeMismatch,
                message: "the download is \(bytes) bytes but \(expected) were expected; nothing was written to \(request.destination)")
        }
        if let expected = request.expectedSha256, expected != sha256 {
            return JobError(
                code: .digestMismatch,
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
            code: .digestMismatch,
            message: "the downloaded file's \(announced.algorithm.rawValue) is \(actual) but the server's \(announced.header) "
                + "says \(announced.hex); the file was damaged on the way or changed meanwhile, and nothing was written to \(request.destination)")
    }

    /// Why a finished file must not be moved to its destination, if it must not: its partial
    /// name no longer refers to it (someone who may write the directory replaced it), or the
    /// destination to overwrite belongs to another user in a sticky directory.
    static func refusal(file: PartialFile, request: TransferRequest) -> JobError? {
        guard file.isInPlace else {
            return JobError(
                code: .disk,
                message: "the partial file \(file.path) was removed or replaced while the download ran, so nothing was moved to "
                    + "\(request.destination): submit the job again")
        }
        guard request.overwrite, let access = request.owner?.accessToCheck(),
            let existing = file.directory.status(of: FileIO.lastComponent(of: request.destination)),
            let directory = try? file.directory.status(), !access.mayReplace(existing, in: directory)
        else { return nil }
        return JobError(
            code: .disk,
            message: "\(request.destination) appeared while the download ran and belongs to uid \(existing.st_uid) in a sticky directory, "
                + "so only its owner may replace it; it was left alone")
    }

    /// Renames the partial file over the destination, or, without overwrite, links it there
    /// (which fails if the destination exists) and removes the partial name. Both work inside the
    /// directory opened when the transfer started, whatever its path leads to now.
    static func moveIntoPlace(_ file: PartialFile, named destination: String, overwrite: Bool) throws(FileIOError) {
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
}
