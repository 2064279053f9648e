public import TransferProtocol

extension TransferManager {
    /// The attempts of a job `caller` may see, oldest first.
    public func log(id: String, caller: UInt32) throws(CoreError) -> Log.Result {
        let job = try visibleJob(id, caller: caller)
        return Log.Result(job: view(job), attempts: job.history ?? [], omitted: job.historyOmitted)
    }
}
