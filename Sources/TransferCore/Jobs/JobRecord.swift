public import Foundation
public import TransferProtocol

/// Everything the daemon knows about a job, as stored in the journal. Unlike the wire `Job`,
/// it carries header values, so it never leaves the daemon.
public struct JobRecord: Codable, Sendable, Equatable {
    public var id: String
    /// Submission order: the scheduler starts queued jobs in this order.
    public var order: UInt64
    public var state: JobState
    public var url: String
    public var destination: String
    public var headers: [String: String]
    public var overwrite: Bool
    public var owner: UInt32
    /// The group the submitting process ran with (`SO_PEERCRED`), when known.
    public var ownerGroup: UInt32?
    /// Whether the client chose the id (so a resubmission with it is idempotent).
    public var idChosenByClient: Bool
    public var createdAt: Date
    public var startedAt: Date?
    public var finishedAt: Date?
    public var attempts: Int
    public var error: JobError?
    /// Bytes of the partial file known to be on disk (synced) at the last checkpoint,
    /// or the final size once completed.
    public var checkpointBytes: Int64
    public var totalBytes: Int64?
    /// The strong validator (ETag, else Last-Modified) of the representation being fetched.
    public var validator: String?
    /// The inode of the partial file; the landed file keeps it.
    public var partialInode: UInt64?
    /// What the client expects of the file.
    public var expectedSha256: String?
    public var expectedSize: Int64?
    /// The job's own retry limits (the configured defaults fill the rest).
    public var retry: RetryLimits?
    /// While waiting: when the next attempt starts.
    public var nextAttemptAt: Date?
    /// Once completed: the file's SHA-256, lowercase hex.
    public var sha256: String?
    /// Where redirects led, credentials removed.
    /// (Spelled so that its snake_case key, `final_url`, reads back into it.)
    public var finalUrl: String?
    /// The content coding of the bytes the file holds, when the server sent one although asked for
    /// `identity`: the file is the bytes as sent.
    public var contentEncoding: String?
    /// Attempts that failed in a row without getting further into the file than any before.
    public var failuresInARow: Int?
    /// The most bytes any attempt had durable: an attempt that gets further resets `failuresInARow`.
    public var furthestBytes: Int64?
    /// The client session the job belongs to.
    public var session: String?
    /// The sequence number of the job's terminal event, once it ended.
    public var eventSeq: UInt64?
    /// Whether the session acknowledged the terminal event (it is not replayed again).
    public var acknowledged: Bool?
    /// Whether a configured hook still has to run for the terminal event.
    public var hookPending: Bool?
    /// When a failed or cancelled job was queued again (`retry`): its time limit counts from then.
    public var restartedAt: Date?

    /// Where the job's time limit (`retry.max_time_seconds`) counts from.
    public var limitsStart: Date { restartedAt ?? createdAt }
    /// Not started before this time.
    public var notBefore: Date?
    /// Failed as `time_limit` if not done by this time.
    public var deadline: Date?
    /// True while the job is paused: it is `queued` (or still `running` while its transfer stops)
    /// but is not started until resumed. Nil when not paused, so older records read the same.
    public var paused: Bool?
    /// The job's priority class; nil: `normal` (so older records read the same).
    public var priority: JobPriority?
    /// Where `move` put the job within its class; nil: by submission order (`queuePosition`).
    public var position: Int64?
    /// True while a background transfer that yielded its slot waits to continue: it is queued at
    /// the front of its class, also after a restart. Nil otherwise.
    public var yielded: Bool?
    /// True when the headers (and an upload's answer) are journaled apart, under `requestKey`;
    /// nil in records from before the split, which hold them inline.
    public var detached: Bool?

    /// When the job fails as `time_limit`: its time limit or its deadline, whichever is first.
    func endOfTime(maxTime: Double) -> Date {
        let limit = limitsStart.addingTimeInterval(maxTime)
        guard let deadline else { return limit }
        return min(limit, deadline)
    }
    /// Nil for a download (journals from before uploads hold none).
    public var kind: JobKind?
    /// Uploads: what the submitter named the file (for display), the spool name of its copy,
    /// the method, the Content-Type, and the server's answer once completed.
    public var source: String?
    public var spool: String?
    public var method: String?
    public var contentType: String?
    public var response: UploadResponse?
    /// Uploads: how the submitter asked it to resume (nil: `auto`), the protocol found for it,
    /// and the upload resource a resumable protocol created, which every later attempt continues.
    public var resumable: ResumableMode?
    public var uploadProtocol: UploadProtocol?
    public var uploadResource: String?
    /// The job's own rate limit in bytes per second (`limit_rate`); nil: none.
    public var limitRate: Int64?
    /// Downloads: the connections asked for (`segments`); nil: the configured default.
    public var segments: Int?
    /// CA certificates (PEM) the job trusts besides the daemon's (`submit` `cacert`).
    public var cacert: String?
    /// The submitter's own text for the job (`submit` `label`).
    public var label: String?
    /// Downloads submitted without a destination: the file lands in the daemon's inbox.
    public var inbox: Bool?
    /// A conditional download (`conditional`), and whether its last end found the file unchanged.
    public var conditional: Bool?
    public var unchanged: Bool?
    /// When the running attempt started, and the last attempts' records (`log`), oldest first.
    public var attemptStartedAt: Date?
    public var history: [AttemptRecord]?
    /// Attempts dropped from `history` to keep it bounded.
    public var historyOmitted: Int?
    /// Downloads fetched over several connections: the ranges past `checkpointBytes` that are
    /// durable in the partial file (of the representation `validator` names), kept by a restart.
    public var parts: [ByteRange]?
    /// Downloads: true once the server's last answer showed it does not take ranges, so the file
    /// comes over one connection whatever `segments` asked.
    public var rangesRefused: Bool?

    public var isUpload: Bool { kind == .upload }

    /// The journal key of this job.
    public var journalKey: String { Self.journalKey(id) }

    public static func journalKey(_ id: String) -> String { "job/" + id }

    /// The partial file beside the destination that receives the bytes until the job lands.
    public var partialPath: String { isUpload ? "" : PartialPath.for(destination: destination, jobID: id) }

    /// The job as a client sees it, with live progress when the engine has it.
    public func wireJob(liveBytes: Int64? = nil, bytesPerSecond: Int64? = nil) -> Job {
        Job(
            id: wireID, state: state, url: Redaction.acceptedURL(url), destination: destination,
            bytesReceived: liveBytes ?? checkpointBytes + (parts?.reduce(0) { $0 + $1.count } ?? 0), totalBytes: totalBytes,
            bytesPerSecond: state == .running ? bytesPerSecond : nil,
            createdAt: createdAt, startedAt: startedAt, finishedAt: finishedAt,
            attempts: attempts, error: error, nextAttemptAt: state == .waiting ? nextAttemptAt : nil,
            expectedSha256: expectedSha256, expectedSize: expectedSize, sha256: sha256, finalUrl: finalUrl.map(Redaction.acceptedURL),
            overwrite: overwrite, headerNames: headers.keys.sorted(), owner: owner, session: session)
            .withKind(of: self, liveBytes: liveBytes)
            .withTimes(notBefore: notBefore, deadline: deadline)
            .withPaused(paused == true && !state.isTerminal)
            .withPriority(priorityClass)
            .withLimitRate(limitRate)
            .withSegments(segments, rangesRefused: rangesRefused == true)
            .withContentEncoding(contentEncoding)
            .withLabel(label)
            .withInbox(inbox)
            .withUnchanged(unchanged)
    }

    /// Records that the job ended with event number `seq`, and whether a hook is due for it;
    /// returns the terminal event. The caller writes the record before the event goes out.
    mutating func numberEnd(_ seq: UInt64, hookSelector: (@Sendable (Job) -> Bool)?) -> JobEvent {
        eventSeq = seq
        let wire = wireJob()
        hookPending = hookSelector?(wire) == true ? true : nil
        return JobEvent(seq: seq, type: JobEventType(latestFor: state), time: finishedAt ?? Date(), job: wire)
    }

    /// Whether `params` asks for the same transfer as this job (for idempotent resubmission).
    func matches(_ params: Submit.Params) -> Bool {
        guard matchesUpload(params) else { return false }
        return url == params.url && (inbox == true ? params.destination == nil : destination == (params.destination ?? ""))
            && headers == (params.headers ?? [:]) && overwrite == (params.overwrite ?? false)
            && expectedSha256 == params.sha256?.lowercased() && expectedSize == params.size
            && (retry ?? RetryLimits()) == (params.retry ?? RetryLimits()) && session == params.session
            && notBefore == params.notBefore && deadline == params.deadline
            && limitRate == params.limitRate.flatMap(ByteRate.limit) && segments == params.segments && cacert == params.cacert
            && label == params.label && (conditional ?? false) == (params.conditional ?? false)
    }
}

/// Names the partial file of a download.
public enum PartialPath {
    /// `<dir>/.<name>.<job id>.part`, shortened so it fits in a 255-byte file name.
    public static func `for`(destination: String, jobID: String) -> String {
        let slash = destination.lastIndex(of: "/") ?? destination.startIndex
        let directory = String(destination[..<slash])
        return directory + "/" + name(for: String(destination[destination.index(after: slash)...]), jobID: jobID)
    }

    /// The partial file's name beside a destination named `name`: `.<name>.<job id>.part`.
    public static func name(for name: String, jobID: String) -> String {
        var name = name
        let suffix = ".\(jobID).part"
        let budget = 255 - 1 - suffix.utf8.count
        while name.utf8.count > budget { name.removeLast() }
        return "." + name + suffix
    }
}

extension Job {
    func withUnchanged(_ unchanged: Bool?) -> Job {
        var job = self
        job.unchanged = unchanged
        return job
    }

    func withInbox(_ inbox: Bool?) -> Job {
        var job = self
        job.inbox = inbox
        return job
    }

    func withLabel(_ label: String?) -> Job {
        var job = self
        job.label = label
        return job
    }

    func withContentEncoding(_ coding: String?) -> Job {
        var job = self
        job.contentEncoding = coding
        return job
    }

    /// The connections asked for, when more than one, and the one used when the server does not
    /// take ranges.
    func withSegments(_ segments: Int?, rangesRefused: Bool) -> Job {
        var job = self
        job.segments = (segments ?? 1) > 1 ? segments : nil
        if job.segments != nil, rangesRefused {
            job.connections = 1
            job.connectionsReason = Job.ConnectionsReason.rangesRefused
        }
        return job
    }

    /// The job with its own rate limit, when it has one.
    func withLimitRate(_ limitRate: Int64?) -> Job {
        var job = self
        job.limitRate = limitRate
        return job
    }

    /// The job marked as paused (the field is left out when it is not).
    func withPaused(_ paused: Bool) -> Job {
        var job = self
        job.paused = paused ? true : nil
        return job
    }

    /// The job with its start time and deadline.
    func withTimes(notBefore: Date?, deadline: Date?) -> Job {
        var job = self
        job.notBefore = notBefore
        job.deadline = deadline
        return job
    }
}
