import Foundation
public import TransferProtocol

/// A job's large fields that do not change from one state to the next (the request's headers, up
/// to 32 KiB; its own CA certificates, up to 64 KiB; an upload's answer, up to
/// `upload_response_body_bytes`): journaled under their own
/// key, `req/<id>`, when the job is accepted (and once more when an upload's answer arrives), so
/// that each state change writes a record of a few hundred bytes instead of all of them.
struct JobRequestRecord: Codable, Sendable, Equatable {
    var headers: [String: String]
    var response: UploadResponse?
    /// The job's own CA certificates (PEM, up to 64 KiB).
    var cacert: String?
}

extension JobRecord {
    /// The journal key of the large fields of the job `id`.
    static func requestKey(_ id: String) -> String { "req/" + id }

    var requestKey: String { Self.requestKey(id) }

    /// What the journal keeps under `journalKey`: without the large fields when they are kept
    /// under `requestKey` (`detached`); a record from before the split stays whole.
    var stateRecord: JobRecord {
        guard detached == true else { return self }
        var record = self
        record.headers = [:]
        record.response = nil
        record.cacert = nil
        return record
    }

    var requestRecord: JobRequestRecord { JobRequestRecord(headers: headers, response: response, cacert: cacert) }

    /// Puts back the large fields read from `requestKey`.
    mutating func attach(_ request: JobRequestRecord) {
        headers = request.headers
        response = request.response
        cacert = request.cacert
    }
}

extension TransferManager {
    /// The journal changes that forget the job `id`: its state record and its large fields.
    static func deletions(of id: String) -> [Journal.Change] {
        [.delete(key: JobRecord.journalKey(id)), .delete(key: JobRecord.requestKey(id))]
    }

    /// The record of the large fields of `job`.
    func requestChange(_ job: JobRecord) throws -> Journal.Change {
        .put(key: job.requestKey, value: try encoder.bytes(job.requestRecord))
    }

    /// Decodes the state record `value` of a job, with its large fields from `journal` when they
    /// are kept apart; throws when either cannot be read.
    static func decodeRecord(_ value: Data, journal: Journal, decoder: JSONDecoder) throws -> JobRecord {
        var job = try decoder.decode(JobRecord.self, from: value)
        guard job.detached == true else { return job }
        guard let request = journal.value(forKey: job.requestKey) else {
            throw JournalError(code: .corrupt, message: "the journal has no \(job.requestKey) record for job \(job.id)")
        }
        job.attach(try decoder.decode(JobRequestRecord.self, from: Data(request)))
        return job
    }

    /// At start-up: puts back the large fields of the unfinished jobs `recovered` whose records
    /// keep them apart; a missing or unreadable one is damage.
    static func attachRequests(to recovered: inout [JobRecord], from journal: Journal, decoder: JSONDecoder) throws(JournalError) {
        for index in recovered.indices where recovered[index].detached == true {
            let key = recovered[index].requestKey
            do {
                guard let request = journal.value(forKey: key) else {
                    throw JournalError(code: .corrupt, message: "no \(key) record")
                }
                recovered[index].attach(try decoder.decode(JobRequestRecord.self, from: Data(request)))
            } catch {
                throw JournalError(
                    code: .corrupt,
                    message: "the journal \(journal.path) holds no readable \(key) record for an unfinished job (\(error)); "
                        + "run the transferd version that wrote it, or move the journal aside")
            }
        }
    }

    /// At start-up: the deletes of large fields whose job is gone (a crash between the two deletes).
    static func orphanedRequests(_ ids: some Sequence<String>, isJob: (String) -> Bool) -> [Journal.Change] {
        ids.filter { !isJob($0) }.map { .delete(key: JobRecord.requestKey($0)) }
    }

    /// A job's whole record as the journal holds it; nil when it holds none (or none readable).
    static func readRecord(_ id: String, from journal: Journal) -> JobRecord? {
        guard let value = journal.value(forKey: JobRecord.journalKey(id)) else { return nil }
        return try? decodeRecord(Data(value), journal: journal, decoder: WireCoding.decoder())
    }
}
