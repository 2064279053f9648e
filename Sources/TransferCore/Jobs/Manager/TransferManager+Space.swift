import Foundation
public import TransferProtocol

/// Disk space as a budget: new work is refused before the state directory's filesystem fills up
/// (with `disk_reserve_bytes` kept free for the work already accepted) or one user's jobs hold
/// more than their share of the journal (`journal_bytes_per_user`, finished jobs included, which
/// are kept for days). State changes of accepted jobs, `status`, `cancel` and events are never
/// refused for space.
extension TransferManager {
    /// Refuses new work whose record (about `bytes`) the journal's filesystem should not take.
    func ensureSpace(forRecordOf bytes: Int) throws(CoreError) {
        if let problem = journal.spaceRefusal(adding: bytes, reserve: configuration.diskReserveBytes) {
            throw CoreError(.insufficientSpace, problem)
        }
    }

    /// Refuses a job of about `bytes` more for `owner` past `journal_bytes_per_user`.
    func ensureBudget(of owner: UInt32, adding bytes: Int) throws(CoreError) {
        let held = jobs.journalBytes(of: owner)
        let budget = configuration.journalBytesPerUser
        guard held + bytes > budget else { return }
        let human = ByteCountFormatting.string
        throw CoreError(
            .limitReached("journal_bytes_per_user"),
            "your jobs, finished ones included, hold \(human(Int64(held))) of the \(human(Int64(budget))) of the journal one user may have "
                + "(journal_bytes_per_user): transferctl clean (or remove ID) forgets your finished jobs and frees it; "
                + "or ask the administrator to raise the limit")
    }

    /// The core's error for a journal write that did not happen: `insufficient_space` when the
    /// filesystem had no room (nothing was saved, the request may be sent again once there is).
    static func notSaved(_ error: any Error, what: String) -> CoreError {
        if let journalError = error as? JournalError, journalError.code == .noSpace {
            return CoreError(.insufficientSpace, "\(what) could not be saved: \(journalError.message)")
        }
        return CoreError(.internalFailure, "\(what) could not be written to the journal (\(error))")
    }
}

extension JobRecord {
    /// About how many bytes the job's record takes in the journal: the fixed fields, plus what
    /// the request and the server made long (URLs, headers, the upload's answer).
    var journalWeight: Int {
        var bytes = 700 + url.utf8.count + 2 * destination.utf8.count
        for (name, value) in headers { bytes += name.utf8.count + value.utf8.count + 6 }
        bytes += (source?.utf8.count ?? 0) + (contentType?.utf8.count ?? 0) + (finalUrl?.utf8.count ?? 0)
        bytes += (uploadResource?.utf8.count ?? 0) + (error?.message.utf8.count ?? 0) + 2 * (label?.utf8.count ?? 0)
        if let response {
            bytes += (response.body?.utf8.count ?? 0) + (response.location?.utf8.count ?? 0) + (response.etag?.utf8.count ?? 0)
        }
        return bytes
    }
}

extension Submit.Params {
    /// About how many journal bytes the job this submit asks for takes.
    var journalWeight: Int {
        var bytes = 700 + url.utf8.count + 2 * (destination?.utf8.count ?? 0) + (source?.utf8.count ?? 0) + 2 * (label?.utf8.count ?? 0)
        for (name, value) in headers ?? [:] { bytes += name.utf8.count + value.utf8.count + 6 }
        return bytes
    }
}
