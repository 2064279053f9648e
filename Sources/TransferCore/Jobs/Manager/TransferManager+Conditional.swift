import Foundation
import Logging
import Metrics
import TransferProtocol

extension TransferManager {
    /// A conditional download's server answered `304`: the job completes, the destination as it was.
    func completedUnchanged(_ record: JobRecord) {
        var job = record
        metrics.transfersCompleted.increment()
        job.state = .completed
        job.finishedAt = Date()
        job.unchanged = true
        job.checkpointBytes = 0
        job.parts = nil
        job.error = nil
        job.logAttempt(.unchanged)
        let event = ended(&job)
        save(job)
        enqueue(event)
        logger(forJob: job.id).info("job completed: the server says the file has not changed (304)", metadata: ["destination": "\(job.destination)"])
    }
}
