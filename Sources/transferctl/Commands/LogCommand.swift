import ArgumentParser
import Foundation
import TransferProtocol

/// `transferctl log ID`: every attempt of a job, as pueue's `log` shows a task's runs.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Show every attempt of a job: when it ran, the bytes, how it ended, the wait that followed.",
        discussion: """
            One line per attempt, oldest first: its number, when it started and how long it ran, \
            the bytes the job held when it ended, and how it ended — completed, retry (with the \
            error and when the next attempt was due), failed, cancelled, paused, yielded (a \
            background job gave its slot to another) or stopped (the daemon stopped). The daemon \
            keeps a job's last 20 attempts; older ones are counted. With --json, prints the \
            answer of the protocol's log method.
            """
    )

    @Argument(help: "The job's id.", completion: JobIDCompletion.kind(.any))
    var id: String

    @Flag(help: "Print the answer as one line of JSON.")
    var json = false

    @OptionGroup var clientOptions: ClientOptions

    func run() async throws {
        let client = try clientOptions.connect()
        let result = try client.call(TransferProtocol.Log.self, .init(id: id))
        if json {
            try JSONOutput.print(result)
            return
        }
        print(Self.render(result))
    }

    static func render(_ result: TransferProtocol.Log.Result) -> String {
        var lines = ["job \(result.job.id): \(result.job.state.rawValue), \(result.job.attempts) attempt\(result.job.attempts == 1 ? "" : "s")"]
        if let omitted = result.omitted, omitted > 0 { lines.append("(\(omitted) earlier attempt\(omitted == 1 ? "" : "s") not kept)") }
        if result.attempts.isEmpty { lines.append("no attempt has ended yet") }
        for record in result.attempts {
            var line = "#\(record.attempt)  \(timestamp(record.startedAt ?? record.endedAt))"
            if let started = record.startedAt, let ran = DurationFormatting.string(interval: record.endedAt.timeIntervalSince(started)) {
                line += "  ran \(ran)"
            }
            line += "  \(ByteCountFormatting.string(record.bytes))  \(record.outcome.rawValue)"
            if let code = record.code {
                line += ": \(code.rawValue)\(record.httpStatus.map { " (HTTP \($0))" } ?? "")"
            }
            if let message = record.message { line += " — \(TerminalText.printable(message))" }
            if let next = record.nextAttemptAt, let wait = DurationFormatting.string(interval: next.timeIntervalSince(record.endedAt)) {
                line += "; next attempt after \(wait), at \(timestamp(next))"
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    private static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(dateTimeSeparator: .space, timeZoneSeparator: .colon, timeZone: .current))
    }
}
