import Foundation
import TransferProtocol

/// How every verb changes a job: the record is changed in the table and the journal change that
/// records it comes back, to be committed with the others of the same request.
extension JobTable {
    /// Stores `job` and returns the journal change that records it. When the record cannot be
    /// encoded, nothing is stored and the error names the job.
    mutating func update(_ job: JobRecord) throws(CoreError) -> Journal.Change {
        let value: [UInt8]
        do {
            value = try encoder.bytes(job.stateRecord)
        } catch {
            throw CoreError(.internalFailure, "job \(job.wireID) could not be encoded (\(error)); nothing was changed")
        }
        self[job.id] = job
        return .put(key: job.journalKey, value: value)
    }

    /// Changes job `id` with `change`, stores it and returns the journal change that records it;
    /// nil when there is no such job.
    mutating func update(_ id: String, _ change: (inout JobRecord) -> Void) throws(CoreError) -> Journal.Change? {
        guard var job = self[id] else { return nil }
        change(&job)
        return try update(job)
    }
}
