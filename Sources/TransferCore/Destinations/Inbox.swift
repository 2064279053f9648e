import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Where downloads submitted without a destination land: the daemon's own directory
/// `<state directory>/inbox`, one subdirectory per user (mode 0700, the daemon's), one file per
/// job, named by the job's id. Nobody reads it by path but the daemon: the submitter gets the file
/// as an open descriptor over the upload socket (`fetch`). A file is deleted when its session
/// acknowledges the job's end, or when the job is removed or expires.
public struct Inbox: Sendable, Equatable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// The inbox beside a spool directory (both live in the state directory).
    public static func beside(spool: String) -> Inbox {
        Inbox(directory: (spool as NSString).deletingLastPathComponent + "/inbox")
    }

    /// The only root inbox downloads may land in.
    var roots: AllowedRoots { AllowedRoots([directory], setting: "the daemon's inbox") }

    public func userDirectory(_ owner: UInt32) -> String { directory + "/\(owner)" }

    /// The file of `owner`'s job whose wire id is `id`.
    public func path(owner: UInt32, id: String) -> String { userDirectory(owner) + "/" + id }

    /// The checks of a submit without destination by `owner`: its own parameters, room in the
    /// owner's inbox (`budget` bytes), the directories, and space for an announced size. Reads
    /// the owner's directory: run off the core's actor (`DestinationChecks` does).
    func admit(_ params: Submit.Params, owner: UInt32, budget: Int64, reserve: Int64) throws(CoreError) {
        try DestinationChecks.checkParameters(params)
        if params.createDirectories == true || params.overwrite != nil {
            throw CoreError(
                .invalidParameter(params.overwrite != nil ? "overwrite" : "create_directories"),
                "a download without destination lands in the daemon's inbox, where overwrite and create_directories do not apply: leave them out")
        }
        let held = bytesHeld(by: owner)
        guard held < budget else {
            throw CoreError(
                .limitReached("inbox_bytes_per_user"),
                "your downloads without destination hold \(ByteCountFormatting.string(held)) in the daemon's inbox, the most one user may "
                    + "(inbox_bytes_per_user): acknowledge the ends you have handled (ack; TransferKit does once its delegate returns), "
                    + "or remove those jobs, then submit again")
        }
        try prepare(owner: owner)
        if let size = params.size {
            try SubmitValidator.validateSpace(for: size, destination: userDirectory(owner) + "/new", reserve: reserve)
        }
    }

    /// Creates the inbox and `owner`'s directory in it (0700) when missing.
    func prepare(owner: UInt32) throws(CoreError) {
        for path in [directory, userDirectory(owner)] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw CoreError(.internalFailure, "cannot create the inbox directory \(path): \(String(cString: strerror(errno))); check the state directory")
        }
    }

    /// Bytes the files in `owner`'s directory take (landed files and partial ones).
    func bytesHeld(by owner: UInt32) -> Int64 {
        let base = userDirectory(owner)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        return names.reduce(0) { total, name in
            var info = stat()
            return lstat(base + "/" + name, &info) == 0 ? total + Int64(info.st_size) : total
        }
    }

    /// Deletes the landed file of `owner`'s job `id`, if there is one.
    func remove(owner: UInt32, id: String) {
        unlink(path(owner: owner, id: id))
    }

    /// The landed files (not partial ones) in the inbox, as (owner, job id) pairs.
    func landedFiles() -> [(owner: UInt32, id: String)] {
        let owners = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return owners.compactMap(UInt32.init).flatMap { owner in
            ((try? FileManager.default.contentsOfDirectory(atPath: userDirectory(owner))) ?? [])
                .filter { !$0.hasPrefix(".") }
                .map { (owner: owner, id: $0) }
        }
    }
}
