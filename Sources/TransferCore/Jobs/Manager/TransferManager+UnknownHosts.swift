import Foundation
import Dispatch
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

extension TransferManager {
    /// After an attempt that could not resolve its host, asks the resolver once more, off the
    /// actor: a name that does not exist (`EAI_NONAME`: the DNS answered that it is unknown) will
    /// not appear by waiting, so the job fails now, as curl fails a typo. A resolver that cannot be
    /// reached, or answers "try again", leaves the job to its retries.
    func checkHostExists(_ job: JobRecord) {
        guard let host = URL(string: job.url)?.host, !host.isEmpty, IPAddress(host) == nil else { return }
        let id = job.id
        let attempts = job.attempts
        Task { [weak self] in
            guard await Self.nameIsUnknown(host) else { return }
            await self?.hostIsUnknown(id, attempts: attempts, host: host)
        }
    }

    /// Fails a job still waiting after the attempt that met the unknown name.
    func hostIsUnknown(_ id: String, attempts: Int, host: String) {
        guard let job = jobs[id], job.state == .waiting, job.attempts == attempts else { return }
        retryTimers.removeValue(forKey: id)?.cancel()
        if job.validator == nil || job.checkpointBytes == 0 {
            PartialFile.remove(job.partialPath, roots: roots(for: job))
        }
        engine.forget(jobID: id)
        markFailed(
            job,
            JobError(
                code: .dns,
                message: "\(host) does not exist (the DNS answered that the name is unknown): check the host name in the URL, then submit again"))
    }

    /// Whether the system's resolver (as libcurl uses it) answers that `host` does not exist.
    /// `getaddrinfo` blocks, so it runs on a dispatch queue, never on a Swift concurrency thread.
    static func nameIsUnknown(_ host: String) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .utility).async {
                var hints = addrinfo()
                hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
                var list: UnsafeMutablePointer<addrinfo>?
                let status = getaddrinfo(host, nil, &hints, &list)
                if let list { freeaddrinfo(list) }
                continuation.resume(returning: status == EAI_NONAME)
            }
        }
    }
}
