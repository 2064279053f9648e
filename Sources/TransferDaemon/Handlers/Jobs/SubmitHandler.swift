import Dispatch
import TransferCore
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

extension RequestRouter {
    /// `submit`: the job belongs to the connecting user, who must be allowed to write where it lands.
    func submit(_ params: Submit.Params, peer: Peer) async throws(RPCError) -> Submit.Result {
        let params = try await spoolingSource(params, peer: peer)
        switch await submits.submit(params, owner: peer.uid, group: peer.gid) {
        case .success(let job): return Submit.Result(job: job)
        case .failure(let error): throw RPCError(error)
        }
    }
}

extension RequestRouter {
    /// The submits of a batch: their jobs are written to the journal together and synced once.
    func submit(_ batch: [Submit.Params], peer: Peer) async -> [Result<Submit.Result, RPCError>] {
        var results = [Result<Submit.Result, RPCError>?](repeating: nil, count: batch.count)
        var ready: [(index: Int, params: Submit.Params)] = []
        for (index, params) in batch.enumerated() {
            do {
                ready.append((index, try await spoolingSource(params, peer: peer)))
            } catch {
                results[index] = .failure(error)
            }
        }
        let answers = await manager.submit(ready.map(\.params), owner: peer.uid, group: peer.gid)
        for ((index, _), answer) in zip(ready, answers) {
            results[index] = answer.map(Submit.Result.init(job:)).mapError(RPCError.init)
        }
        return results.map { $0 ?? .failure(RPCError(.internalError, "the submit produced no answer")) }
    }

    /// An upload that names its source by path: the daemon copies it into the spool with its own
    /// rights, which only its own user may ask for; everyone else hands the open file over
    /// (transferctl upload does), so that nothing is read with rights the submitter lacks.
    func spoolingSource(_ params: Submit.Params, peer: Peer) async throws(RPCError) -> Submit.Params {
        try await framingForm(try await copyingSource(params, peer: peer), peer: peer)
    }

    private func copyingSource(_ params: Submit.Params, peer: Peer) async throws(RPCError) -> Submit.Params {
        guard params.kind == JobKind.upload.rawValue, params.spool == nil, let source = params.source, let spool = manager.spool else {
            return params
        }
        guard peer.uid == geteuid() else {
            throw RPCError(
                .notPermitted,
                "transferd does not open \(source) for you: it reads a file to upload only with your own rights. "
                    + "Pass it from transferctl (transferctl upload \(source) URL), which hands the open file over")
        }
        guard source.hasPrefix("/") else {
            throw RPCError(.invalidParams, "source '\(source.prefix(200))' is not an absolute path: give the file's absolute path")
        }
        var spooled = params
        spooled.spool = try await Self.blocking { () throws(CoreError) in try spool.ingest(path: source, owner: peer.uid) }.name
        return spooled
    }

    /// Runs `work`, which blocks for as long as a copy of gigabytes takes, on a thread of its
    /// own rather than on the concurrency pool.
    static func blocking(_ work: @escaping @Sendable () throws(CoreError) -> Spool.Entry) async throws(RPCError) -> Spool.Entry {
        let outcome: Result<Spool.Entry, CoreError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: Result { () throws(CoreError) in try work() }) }
        }
        return try outcome.mapError(RPCError.init).get()
    }
}
