import Foundation
import TransferProtocol

extension Job {
    /// The wire job with what only uploads have: for them the progress is `bytes_sent`, and
    /// `bytes_received` stays 0.
    func withKind(of record: JobRecord, liveBytes: Int64?) -> Job {
        var job = self
        job.kind = record.kind ?? .download
        guard record.isUpload else { return job }
        job.bytesSent = liveBytes ?? record.checkpointBytes
        job.bytesReceived = 0
        job.source = record.source
        job.method = record.method
        job.response = record.response
        job.uploadProtocol = record.uploadProtocol
        job.uploadUrl = record.uploadResource.map(Redaction.acceptedURL)
        return job
    }
}

extension JobRecord {
    /// Whether `params` asks for the same kind of job, and for an upload the same method, type
    /// and file name (the spool name differs on every hand-off, so it is not compared).
    func matchesUpload(_ params: Submit.Params) -> Bool {
        let kind = params.kind.flatMap(JobKind.init(rawValue:)) ?? .download
        guard kind == (self.kind ?? .download) else { return false }
        guard kind == .upload else { return true }
        return method == (params.method?.uppercased() ?? UploadMethod.put.rawValue) && contentType == params.contentType
            && source == params.source && (resumable ?? .auto) == ResumableMode(rawValue: params.resumable?.lowercased() ?? "auto")
    }

    /// The spool file of an upload.
    func spoolPath(in spool: Spool) -> String? {
        self.spool.map(spool.path(of:))
    }
}
