import TransferCore
import TransferProtocol

extension TransferManager {
    /// One job, or the first page of the caller's jobs (oldest first), as a plain list.
    func status(id: String?, states: [JobState]?, caller: UInt32, all: Bool = false) throws(CoreError) -> [Job] {
        try status(Status.Params(id: id, states: states, all: all ? true : nil, limit: Status.maxLimit), caller: caller).jobs
    }
}
