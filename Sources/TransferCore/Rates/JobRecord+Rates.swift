import TransferProtocol

extension JobRecord {
    /// The bandwidth class the job's transfers share limits with: `background_max_rate` applies
    /// to `background` jobs.
    var bandwidthClass: BandwidthClass { priorityClass == .background ? .background : .normal }
}

extension Job {
    /// The running job with the rate it is paced at, and a warning when its limit cannot be held.
    func withPacing(_ progress: TransferProgress) -> Job {
        var job = self
        job.pacedRate = progress.pacedRate
        if job.segments != nil, job.connections == nil, progress.pacedRate != nil {
            job.connections = 1
            job.connectionsReason = Job.ConnectionsReason.rateLimit
        }
        if progress.limitUnheld {
            job.warning =
                job.kind == .upload
                ? "the rate limit cannot be held for this upload: the server takes neither tus nor the IETF resumable uploads, "
                    + "so the file goes in one request that cannot be paced"
                : "the rate limit cannot be held for this job: the server ignores ranges, so the file comes in one request that cannot be paced"
        }
        return job
    }
}
