import Foundation
import Logging
import TransferProtocol

/// The steps before an attempt, on the I/O queue: the destination's directory opened from its
/// allowed root without following a symbolic link, the partial file opened in it and cut back to
/// the resume point, and the digest of the bytes it keeps.
enum TransferPreparation {
    /// What the steps found.
    enum Outcome {
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
        /// Ranges past `offset` kept in the file from earlier attempts (a download over several connections).
        var keptParts: [ByteRange] = []
        /// `If-None-Match`/`If-Modified-Since` for a conditional download that starts from byte 0.
        var conditionalHeaders: [String: String] = [:]
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

    /// Checks the host (it may resolve a name: blocking), then prepares the partial file.
    static func run(_ request: TransferRequest, hosts: HostGuard, suspended: SuspendedDigest?) -> Outcome {
        // Before every attempt: the rules may have changed, and the name may resolve elsewhere now.
        if let refused = hostFailure(for: request.url, hosts: hosts) { return .refused(refused) }
        return .opened(prepare(request, suspended: suspended))
    }

    /// Why the host rules refuse `url`, as the failure of an attempt. Blocks while a name resolves.
    static func hostFailure(for url: URL, hosts: HostGuard) -> TransferFailure? {
        switch hosts.verdict(for: url) {
        case .allowed:
            return nil
        case .refused(let message):
            return .permanent(JobError(code: .hostNotAllowed, message: "\(Redaction.url(url)) was not fetched: \(message)"))
        case .unresolved(let message):
            return .transient(JobError(code: .dns, message: message))
        }
    }

    /// Opens the directory and the partial file (checking the owner's access when the daemon
    /// writes for another user) and gets the digest of the bytes it keeps: from memory after an
    /// interruption in this run, else by reading them once.
    static func prepare(_ request: TransferRequest, suspended: SuspendedDigest?) -> Result<PreparedFile, PrepareFailure> {
        let directory: DirectoryHandle
        let destination: DestinationPath
        do throws(DestinationError) {
            destination = try DestinationPath.parse(request.destination, roots: request.allowedRoots)
            directory = try DirectoryWalker.open(destination, access: request.owner?.accessToCheck())
        } catch {
            return .failure(PrepareFailure(failure: FailureClassifier.refusal(error, destination: request.destination), file: nil))
        }
        let file: PartialFile
        let offset: Int64
        var keptParts: [ByteRange] = []
        do throws(PartialFile.OpenError) {
            let keeping = request.validator == nil ? 0 : request.resumeFrom
            let extent = request.validator == nil ? nil : request.parts.map(\.end).max()
            let opened = try PartialFile.open(
                in: directory, name: PartialPath.name(for: destination.name, jobID: request.jobID),
                keeping: keeping, extent: extent, owner: request.owner)
            (file, offset) = (opened.file, opened.offset)
            if opened.keptExtent { keptParts = request.parts }
        } catch {
            switch error {
            case .io(let error):
                return .failure(PrepareFailure(failure: FailureClassifier.disk(error, writing: request.partialPath), file: nil))
            case .foreign(let error):
                return .failure(
                    PrepareFailure(failure: FailureClassifier.refusal(error, destination: request.destination), file: nil, foundForeignFile: true))
            }
        }
        let conditional = request.conditional && offset == 0 ? ConditionalGet.headers(in: directory, name: destination.name) : [:]
        if let suspended, suspended.bytes == offset, suspended.inode == file.inode {
            return .success(
                PreparedFile(
                    file: file, offset: offset, digest: suspended.digest, announcedDigest: suspended.announcedDigest, keptParts: keptParts,
                    conditionalHeaders: conditional))
        }
        do throws(FileIOError) {
            let digest = try FileDigest.ofPrefix(fd: file.fd, path: file.path, length: offset)
            return .success(
                PreparedFile(file: file, offset: offset, digest: digest, announcedDigest: nil, keptParts: keptParts, conditionalHeaders: conditional))
        } catch {
            return .failure(PrepareFailure(failure: FailureClassifier.disk(error, writing: file.path), file: file))
        }
    }
}
