import Foundation
import TransferProtocol

/// Downloads without a destination, kept in the daemon's inbox for their submitter.
extension TransferManager {
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
