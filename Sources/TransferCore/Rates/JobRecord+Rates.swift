import TransferProtocol

extension JobRecord {
    /// The bandwidth class the job's transfers share limits with. Jobs have no priority class yet:
    /// once they do, a `background` job answers `.background` here, and `background_max_rate`
    /// applies to it with nothing else to change.
    var bandwidthClass: BandwidthClass { .normal }
}

extension Job {
    /// The running job with the rate it is paced at, and a warning when its limit cannot be held.
    func withPacing(_ progress: TransferProgress) -> Job {
        var job = self
        job.pacedRate = progress.pacedRate
        if progress.limitUnheld {
            job.warning =
                "the rate limit cannot be held for this job: the server ignores ranges, so the file comes in one request that cannot be paced"
        }
        return job
    }
}
