import Foundation
import Logging
import Metrics
import TransferProtocol

extension TransferManager {
    /// A conditional download's server answered `304`: the job completes, the destination as it was.
    func completedUnchanged(_ record: JobRecord) {
        var job = record
        job.unchanged = true
        complete(job, holding: 0, as: .unchanged)
        logger(forJob: job.id).info("job completed: the server says the file has not changed (304)", metadata: ["destination": "\(job.destination)"])
    }
}
