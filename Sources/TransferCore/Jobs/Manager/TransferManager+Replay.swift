import Foundation
import Synchronization
import TransferProtocol

extension TransferManager {
    /// What start-up reads from the journal's records, in the order of the file.
    struct Replay {
        var sequenceRecord: [UInt8]?
        var holdRecord = false
        /// Unfinished jobs, decoded whole.
        var recovered: [JobRecord] = []
        /// Finished jobs, read as summaries (`JobSummaryScan`).
        var finished: [(id: String, summary: FinishedJob)] = []
        /// Queued downloads not yet started, kept light: their records stay in the journal.
        var light: [(id: String, job: QueuedJob, host: String)] = []
        /// The sizes of the records of large fields (`req/<id>`).
        var requestSizes: [String: Int] = [:]

        mutating func append(_ later: Replay) {
            sequenceRecord = later.sequenceRecord ?? sequenceRecord
            holdRecord = holdRecord || later.holdRecord
            recovered += later.recovered
            finished += later.finished
            light += later.light
            requestSizes.merge(later.requestSizes) { $1 }
        }
    }

    /// Reads every live record of `journal`. The file is split in parts read on as many threads
    /// as there are cores (up to 4): scanning the records is most of what start-up costs.
    static func replay(_ journal: Journal) throws -> Replay {
        try journal.withLiveValues { values in
            let parts = min(ProcessInfo.processInfo.activeProcessorCount, 4, values.count / 4096 + 1)
            let results = Mutex<[Int: Result<Replay, any Error>]>([:])
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let range = (values.count * part / parts)..<(values.count * (part + 1) / parts)
                let result = Result { try replay(values, range, journalPath: journal.path) }
                results.withLock { $0[part] = result }
            }
            return try results.withLock { results in
                var replay = Replay()
                for part in 0..<parts { try results[part].map { replay.append(try $0.get()) } }
                return replay
            }
        } ?? Replay()
    }

    private static func replay(_ values: Journal.LiveValues, _ range: Range<Int>, journalPath: String) throws -> Replay {
        let decoder = WireCoding.decoder()
        var replay = Replay()
        for index in range {
            let value = values.value(index)
            if let id = values.jobID(index) {
                try replayJob(id, value, into: &replay, decoder: decoder, journalPath: journalPath)
                continue
            }
            let key = values.key(index)
            if key.hasPrefix("req/") {
                replay.requestSizes[String(key.dropFirst(4))] = value.count
                continue
            }
            if key == sequenceKey {
                replay.sequenceRecord = Array(value)
                continue
            }
            if key == holdKey {
                replay.holdRecord = true
                continue
            }
            // A job key the index holds whole: one whose id starts with "/" (`Journal.IndexKey`).
            guard key.hasPrefix("job/") else { continue }
            try replayJob(String(key.dropFirst(4)), value, into: &replay, decoder: decoder, journalPath: journalPath)
        }
        return replay
    }

    /// Reads the record of job `id`: a finished or queued job as its summary when the record's
    /// shape allows, anything else decoded whole.
    private static func replayJob(
        _ id: String, _ value: UnsafeRawBufferPointer, into replay: inout Replay, decoder: JSONDecoder, journalPath: String
    ) throws {
        switch JobSummaryScan.replayed(of: value) {
        case .finished(var summary):
            summary.weight = UInt32(clamping: value.count)
            replay.finished.append((id, summary))
            return
        case .queued(var job, let host):
            job.summary.weight = UInt32(clamping: value.count)
            replay.light.append((id, job, host))
            return
        case nil:
            break
        }
        do {
            let job = try decoder.decode(JobRecord.self, from: Data(value))
            if job.state.isTerminal {
                var summary = FinishedJob(job)
                summary.weight = UInt32(clamping: value.count)
                replay.finished.append((id, summary))
            } else {
                replay.recovered.append(job)
            }
        } catch {
            throw JournalError(
                code: .corrupt,
                message: "the journal \(journalPath) holds a record for \(JobRecord.journalKey(id)) that this version cannot read (\(error)); "
                    + "run the transferd version that wrote it, or move the journal aside")
        }
    }
}
