import ArgumentParser
import TransferProtocol

/// `transferctl submit URL DEST`: hands a download to transferd and prints the job's id.
struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue a download of URL into the file DEST.",
        discussion: """
            Prints the job's id (with --json, the job). With --wait, shows progress on stderr \
            until the job ends, then prints the id and exits 0 if it completed, 1 if it failed \
            or was cancelled.
            """
    )

    @Argument(help: "The http or https URL to download.")
    var url: String

    @Argument(help: ArgumentHelp("The file to create; a relative path is taken from the current directory.", valueName: "dest"))
    var destination: String

    @Option(help: ArgumentHelp(
        "Your own id for the job; submitting the same request with the same id again returns the existing job.",
        valueName: "id"))
    var id: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp("A request header, as 'Name: value'. Repeat for several.", valueName: "name: value"))
    var headers: [String] = []

    @Flag(help: "Replace DEST if it already exists.")
    var overwrite = false

    @Option(help: ArgumentHelp(
        "The file's expected SHA-256 (64 hex digits, as sha256sum prints it); a different file fails the job and is not kept.",
        valueName: "hex"))
    var sha256: String?

    @Option(help: ArgumentHelp(
        "The file's expected size in bytes; checked against the server's and the destination's free space.",
        valueName: "bytes"))
    var size: Int64?

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
        "Submit under this session: its end is kept until the session acknowledges it (transferctl events --session NAME --ack).",
        valueName: "name"))
    var session: String?

    @Flag(help: "Wait until the job ends, showing its progress on stderr.")
    var wait = false

    @Flag(help: "Print the job as one line of JSON instead of its id.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if url.isEmpty { throw ValidationError("URL must not be empty") }
        if destination.isEmpty { throw ValidationError("DEST must not be empty") }
        if let id, !Limits.isValidName(id) {
            // The daemon's rule, checked here so that a bad id is a usage error (exit 2).
            throw ValidationError("--id must be 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, and not . or .., e.g. nightly-db.2024")
        }
        _ = try RequestHeader.dictionary(parsing: headers)
        if let sha256, sha256.utf8.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw ValidationError("--sha256 must be 64 hexadecimal digits, as printed by sha256sum")
        }
        if let size, size < 0 { throw ValidationError("--size must not be negative") }
        if let session { try SessionName.validate(session) }
        if let maxAttempts, maxAttempts < 1 { throw ValidationError("--max-attempts must be at least 1") }
        for (name, value) in [("--max-time", maxTime), ("--idle-timeout", idleTimeout), ("--low-speed-time", lowSpeedTime)] {
            if let value, !(value > 0 && value.isFinite) { throw ValidationError("\(name) must be a positive number of seconds") }
        }
        if let lowSpeedLimit, lowSpeedLimit < 0 { throw ValidationError("--low-speed-limit must not be negative") }
    }

    private var retryLimits: RetryLimits {
        RetryLimits(
            maxAttempts: maxAttempts, maxTimeSeconds: maxTime, idleTimeoutSeconds: idleTimeout,
            lowSpeedBytesPerSecond: lowSpeedLimit, lowSpeedSeconds: lowSpeedTime)
    }

    func run() async throws {
        let headerFields = try RequestHeader.dictionary(parsing: headers)
        let params = TransferProtocol.Submit.Params(
            url: url,
            destination: try AbsolutePath.resolve(destination),
            headers: headerFields.isEmpty ? nil : headerFields,
            overwrite: overwrite ? true : nil,
            id: id,
            sha256: sha256,
            size: size,
            retry: retryLimits.isEmpty ? nil : retryLimits,
            session: session
        )
        let client = try clientOptions.connect(timeout: wait ? nil : .seconds(60))
        var job = try client.call(TransferProtocol.Submit.self, params).job
        if wait {
            job = try JobWaiter(client: client).wait(for: [job.id]).first ?? job
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
