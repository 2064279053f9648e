import Foundation
import Logging
import Metrics
import TransferProtocol

extension TransferManager {
    /// A conditional download's server answered `304`: the job completes, the destination as it was.
    func completedUnchanged(_ record: JobRecord) {
        var job = record
        job.unchanged = true
        completeDownload(job, holding: 0, as: .unchanged)
        logger(forJob: job.id).info("job completed: the server says the file has not changed (304)", metadata: ["destination": "\(job.destination)"])
    }

    /// Ends a download as completed, holding `bytes`: the record, the attempt's log line and the
    /// terminal event, the same for a file that landed and one that had not changed.
    func completeDownload(_ record: JobRecord, holding bytes: Int64, as outcome: AttemptRecord.Outcome) {
        var job = record
        metrics.transfersCompleted.increment()
        job.state = .completed
        job.finishedAt = Date()
        job.checkpointBytes = bytes
        job.parts = nil
        job.error = nil
        job.logAttempt(outcome)
        let event = ended(&job)
        save(job)
        enqueue(event)
    }
}
