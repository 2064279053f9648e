import Foundation
import Logging
import Metrics
import TransferProtocol

/// Uploads in the core: admitting one against its spool copy, the plan the engine sends, the
/// end, and freeing the copy.
extension TransferManager {
    /// Checks an upload submit and claims its spool copy; returns the record to write, or the
    /// existing job its id names (the new copy is then freed).
    /// `replacing`: the job its id names has ended and is being replaced (checked by `admit`).
    func admitUpload(_ params: Submit.Params, url: URL, owner: UInt32, group: UInt32?, replacing: Bool) throws(CoreError) -> SubmitCheck {
        guard let spool else {
            throw CoreError(.invalidParameter("kind"), "this transferd takes no uploads (it has no spool)")
        }
        guard let name = params.spool else {
            throw CoreError(
                .invalidParameter("source"),
                "an upload needs its file handed over: transferctl upload FILE URL does it (it passes the open file to the daemon); "
                    + "over the socket, only the daemon's own user may name a source path instead")
        }
        if let id = params.id, !replacing {
            try SubmitValidator.validateID(id)
            if let existing = ownedKey(id, owner: owner).flatMap({ jobs[$0] }) {
                guard existing.idChosenByClient, existing.owner == owner, existing.matches(params) else {
                    throw Self.idConflict(id)
                }
                // The repeated hand-off's copy is not needed: freed if it is the caller's and unclaimed.
                if existing.spool != name { spool.discard(name, owner: owner) }
                return .existing(existing)
            }
        }
        let method = try SubmitValidator.validateMethod(params.method)
        try SubmitValidator.validateContentType(params.contentType)
        let resumable = try SubmitValidator.validateResumable(params.resumable)
        try SubmitValidator.validateHeaders(params.headers ?? [:])
        if let contentType = params.contentType, (params.headers ?? [:]).keys.contains(where: { $0.lowercased() == "content-type" }) {
            throw CoreError(.invalidHeader, "give the Content-Type once: as content_type (\(contentType.prefix(40))) or as a header, not both")
        }
        let sha256 = try SubmitValidator.validateSHA256(params.sha256)
        if let session = params.session { try SubmitValidator.validateSession(session) }
        try SubmitValidator.validateRetryLimits(params.retry)
        try ensureRoom(for: owner)
        try ensureBudget(of: owner, adding: params.journalWeight)
        let entry = try spool.claim(name, owner: owner)
        if let sha256, sha256 != entry.sha256 {
            spool.release(name)
            throw CoreError(
                .invalidParameter("sha256"),
                "\(params.source ?? "the file") has SHA-256 \(entry.sha256), not the expected \(sha256): nothing was accepted; check the file")
        }
        let id = keyForSubmit(params.id, owner: owner)
        var job = JobRecord(
            id: id, order: nextOrder, state: .queued, url: params.url, destination: "",
            headers: params.headers ?? [:], overwrite: false, owner: owner, ownerGroup: group, idChosenByClient: params.id != nil,
            createdAt: Date(), attempts: 0, checkpointBytes: 0, totalBytes: entry.size, expectedSha256: sha256,
            retry: params.retry?.isEmpty == false ? params.retry : nil, session: params.session)
        job.kind = .upload
        job.source = params.source
        job.spool = name
        job.method = method.rawValue
        job.contentType = params.contentType
        job.resumable = resumable == .auto ? nil : resumable
        job.sha256 = entry.sha256
        job.detached = true
        nextOrder += 1
        return .new(job, url)
    }

    /// What the engine sends for upload `job`. Without a spool copy (none was claimed, or there
    /// is no spool), the path is empty: the engine's check of the copy fails the job, saying to
    /// hand the file over again.
    func uploadPlan(for job: JobRecord) -> UploadPlan {
        var plan = UploadPlan(
            spoolPath: spool.flatMap { job.spoolPath(in: $0) } ?? "", method: job.method ?? UploadMethod.put.rawValue, contentType: job.contentType,
            size: job.totalBytes ?? 0, sha256: Self.bytes(ofHex: job.sha256 ?? ""))
        plan.resumable = job.resumable ?? .auto
        plan.protocolUsed = job.uploadProtocol
        plan.resource = job.uploadResource.flatMap(URL.init(string:))
        plan.fileName = job.source.map { String($0.split(separator: "/").last ?? "") }
        return plan
    }

    /// Keeps what a resumable upload learned (its protocol, its resource, the server's offset),
    /// so that the attempt after a restart continues it instead of starting again.
    func uploadProgressed(_ record: JobRecord, protocolUsed: UploadProtocol, resource: String?, offset: Int64) {
        var job = record
        job.uploadProtocol = protocolUsed
        job.uploadResource = resource
        job.checkpointBytes = offset
        save(job)
    }

    /// Records a 2xx answer: the job completes with it, and its copy is freed once that is on disk.
    func uploadCompleted(_ record: JobRecord, bytes: Int64, response: UploadResponse) {
        var job = record
        job.response = response
        // The answer (up to upload_response_body_bytes) joins the large fields, written once.
        if job.detached == true, let change = try? requestChange(job) { journal.write([change]) }
        complete(job, holding: bytes, as: .completed)
        releaseSpool(of: job)
        logger(forJob: job.id).info(
            "job completed: the server accepted the upload", metadata: ["status": "\(response.status)", "bytes": "\(bytes)"])
    }

    /// Frees an upload's spool copy (its job ended or was cancelled): at once when the record of
    /// that end is on disk (`endIsDurable`), otherwise once it is, with the outbox's next sync or
    /// a subscriber's (before the end's event reaches anyone, live or replayed); the caller has
    /// written the record. Freed earlier, a crash before the record was synced would bring the job
    /// back unfinished with its copy gone, and fail it: an upload the server had accepted would be
    /// reported failed. While the state directory's disk is too full for the record, the copy
    /// stays too.
    func releaseSpool(of job: JobRecord, endIsDurable: Bool = false) {
        guard job.isUpload, let name = job.spool, let spool else { return }
        if endIsDurable {
            spool.release(name)
        } else if outbox.free(name) {
            startDrain()
        }
    }

    /// An upload that ends without completing (cancelled, or failed for good): its copy is freed
    /// (see `releaseSpool`), and the server is asked to drop the resumable resource nobody will
    /// complete.
    func abandonUpload(_ job: JobRecord) {
        releaseSpool(of: job)
        guard job.isUpload, let used = job.uploadProtocol, used != .plain, let text = job.uploadResource,
            let resource = URL(string: text)
        else { return }
        engine.terminateUpload(
            UploadTermination(
                jobID: job.id, resource: resource, protocolUsed: used, headers: job.headers, jobURL: URL(string: job.url), cacert: job.cacert,
                logger: logger(forJob: job.id)))
    }

    /// At start-up: keeps the copies of unfinished uploads and removes every other spool file.
    static func recoverSpool(_ spool: Spool?, jobs: [JobRecord], logger: Logger) {
        guard let spool else { return }
        let held = jobs.filter { $0.isUpload && !$0.state.isTerminal }.compactMap { job in
            job.spool.map { (name: $0, owner: job.owner, size: job.totalBytes ?? 0, sha256: job.sha256 ?? "") }
        }
        let removed = spool.recover(holding: held)
        if !removed.isEmpty {
            logger.info("removed spool files no unfinished upload holds", metadata: ["count": "\(removed.count)"])
        }
    }

    static func bytes(ofHex hex: String) -> Data {
        var data = Data()
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let byte = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return Data() }
            data.append(byte)
        }
        return data
    }
}
