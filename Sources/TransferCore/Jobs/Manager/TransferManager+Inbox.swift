import Foundation
import TransferProtocol

/// Downloads without a destination, kept in the daemon's inbox for their submitter.
extension TransferManager {
    /// The checks of an inbox submit: its own parameters, room in the owner's inbox, and the
    /// inbox directories.
    func admitToInbox(_ params: Submit.Params, inbox: Inbox, owner: UInt32) throws(CoreError) {
        try DestinationChecks.checkParameters(params)
        if params.createDirectories == true || params.overwrite != nil {
            throw CoreError(
                .invalidParameter(params.overwrite != nil ? "overwrite" : "create_directories"),
                "a download without destination lands in the daemon's inbox, where overwrite and create_directories do not apply: leave them out")
        }
        let held = inbox.bytesHeld(by: owner)
        guard held < configuration.inboxBytesPerUser else {
            throw CoreError(
                .limitReached("inbox_bytes_per_user"),
                "your downloads without destination hold \(ByteCountFormatting.string(held)) in the daemon's inbox, the most one user may "
                    + "(inbox_bytes_per_user): acknowledge the ends you have handled (ack; TransferKit does once its delegate returns), "
                    + "or remove those jobs, then submit again")
        }
        try inbox.prepare(owner: owner)
        if let size = params.size {
            try SubmitValidator.validateSpace(for: size, destination: inbox.userDirectory(owner) + "/new", reserve: configuration.diskReserveBytes)
        }
    }

    /// The roots a job's files may be in: the inbox for an inbox download.
    func roots(for job: JobRecord) -> AllowedRoots {
        job.inbox == true ? (configuration.inbox?.roots ?? configuration.allowedRoots) : configuration.allowedRoots
    }

    /// Deletes the inbox files of the jobs `keys` name (of any kind: only inbox downloads have one).
    func dropInboxFiles(of keys: [String]) {
        guard let inbox = configuration.inbox else { return }
        for key in keys {
            if let owner = jobs.summary(key)?.owner { inbox.remove(owner: owner, id: JobRecord.wireID(ofKey: key)) }
        }
    }

    /// At start-up: deletes the inbox files no job holds any more (a crash between an
    /// acknowledgement and the deletion).
    public func pruneInbox() {
        guard let inbox = configuration.inbox else { return }
        for (owner, id) in inbox.landedFiles() {
            let key = [id, JobRecord.key(owner: owner, chosenID: id)].first { jobs.summary($0)?.owner == owner }
            let summary = key.flatMap { jobs.summary($0) }
            if summary == nil || (summary?.session != nil && summary?.acknowledged == true) { inbox.remove(owner: owner, id: id) }
        }
    }
}
