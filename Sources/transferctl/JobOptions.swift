import Foundation
import ArgumentParser
import TransferProtocol

/// The options `submit` and `upload` share: retry limits, the session, and how to wait and print.
struct JobOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Failed attempts in a row before the job fails (default: the daemon's retry_max_attempts).", valueName: "n"))
    var maxAttempts: Int?

    @Option(help: ArgumentHelp("Seconds from now after which the job fails instead of retrying (default: retry_max_time_seconds).", valueName: "seconds"))
    var maxTime: Double?

    @Option(help: ArgumentHelp("Seconds without data after which an attempt is retried (default: idle_timeout_seconds).", valueName: "seconds"))
    var idleTimeout: Double?

    @Option(help: ArgumentHelp("Bytes per second below which an attempt counts as stalled (default: low_speed_bytes_per_second).", valueName: "bytes"))
    var lowSpeedLimit: Int64?

    @Option(help: ArgumentHelp("Seconds the rate must stay below --low-speed-limit before the attempt is retried (default: low_speed_seconds).", valueName: "seconds"))
    var lowSpeedTime: Double?

    @Option(help: ArgumentHelp(
        "The most bytes per second this job may use, as curl spells it: 500K, 2M, 1G (powers of 1024), or a number of bytes.",
        valueName: "rate"))
    var limitRate: String?

    @Option(help: ArgumentHelp(
        "Submit under this session: its end is kept until the session acknowledges it (transferctl events --session NAME --ack).",
        valueName: "name"))
    var session: String?

    @Option(help: ArgumentHelp(
        "Do not start before this time: ISO 8601 (2026-11-24T02:00:00Z) or from now (+90s, +30m, +2h, +1d).", valueName: "time"))
    var notBefore: String?

    @Option(help: ArgumentHelp(
        "Fail as time_limit if not done by this time (as --not-before; with --not-before, +DURATION counts from that start).",
        valueName: "time"))
    var deadline: String?

    @Option(help: ArgumentHelp(
        "The job's class: foreground and normal jobs start first; a background job yields its slot to them (default: normal).",
        valueName: "class"),
        completion: .list(JobPriority.allCases.map(\.rawValue)))
    var priority: String?

    @Option(help: ArgumentHelp(
        "Also trust the CA certificates in this PEM file for the job's https connections, as curl's --cacert "
            + "(transferctl reads it and sends its content; the daemon never opens your path).",
        valueName: "file"))
    var cacert: String?

    @Flag(help: "Wait until the job ends, showing its progress on stderr.")
    var wait = false

    @Flag(help: "Print the job as one line of JSON instead of its id.")
    var json = false

    func validate() throws {
        if let session { try SessionName.validate(session) }
        if let priority, JobPriority(rawValue: priority) == nil {
            throw ValidationError("--priority '\(priority)' is not a class: give \(JobPriority.choices)")
        }
        if let maxAttempts, maxAttempts < 1 { throw ValidationError("--max-attempts must be at least 1") }
        for (name, value) in [("--max-time", maxTime), ("--idle-timeout", idleTimeout), ("--low-speed-time", lowSpeedTime)] {
            if let value, !(value > 0 && value.isFinite) { throw ValidationError("\(name) must be a positive number of seconds") }
        }
        if let lowSpeedLimit, lowSpeedLimit < 0 { throw ValidationError("--low-speed-limit must not be negative") }
        if let limitRate, let problem = ByteRate.problem("--limit-rate", limitRate) { throw ValidationError(problem) }
        for (name, value) in [("--not-before", notBefore), ("--deadline", deadline)] {
            if let value, Self.time(value) == nil {
                throw ValidationError("\(name) '\(value)' is not a time: give ISO 8601 (2026-11-24T02:00:00Z) or +DURATION (+90s, +30m, +2h, +1d)")
            }
        }
    }

    /// The text of `--cacert`'s file; nil without the option.
    func cacertPEM() throws -> String? {
        guard let cacert else { return nil }
        guard let data = FileManager.default.contents(atPath: cacert) else {
            throw ValidationError("--cacert \(cacert) cannot be read: give a readable PEM file of CA certificates")
        }
        let text = String(decoding: data, as: UTF8.self)
        guard text.contains("-----BEGIN CERTIFICATE-----") else {
            throw ValidationError("--cacert \(cacert) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        return text
    }

    /// `--not-before` and `--deadline` as times. A relative deadline after a start time counts from
    /// the start: `--not-before 02:00 --deadline +8h` gives the job eight hours from 02:00.
    var times: (notBefore: Date?, deadline: Date?) {
        let start = notBefore.flatMap { Self.time($0) }
        return (start, deadline.flatMap { Self.time($0, now: start ?? Date()) })
    }

    /// An ISO 8601 time, or `+N` with s, m, h or d from now.
    static func time(_ text: String, now: Date = Date()) -> Date? {
        if text.hasPrefix("+") {
            return CleanCommand.seconds(String(text.dropFirst())).map { now.addingTimeInterval($0) }
        }
        return WireCoding.parseTimestamp(text)
    }

    /// The job's own retry limits; nil when none was given.
    var retry: RetryLimits? {
        let limits = RetryLimits(
            maxAttempts: maxAttempts, maxTimeSeconds: maxTime, idleTimeoutSeconds: idleTimeout,
            lowSpeedBytesPerSecond: lowSpeedLimit, lowSpeedSeconds: lowSpeedTime)
        return limits.isEmpty ? nil : limits
    }

    /// After one job was accepted: waits for it with --wait, prints its id (or, with --json, the
    /// job), and exits 1 when a waited-for job did not complete.
    func finish(_ accepted: Job, client: ControlClient, options: ClientOptions) throws {
        var job = accepted
        if wait {
            job = try JobWaiter(client: client, options: options).wait(for: [job.id]).first ?? job
        }
        if json {
            try JSONOutput.print(job)
        } else {
            print(job.id)
        }
        if wait, job.state != .completed {
            throw TransferCtlError.jobUnsuccessful
        }
    }
}
