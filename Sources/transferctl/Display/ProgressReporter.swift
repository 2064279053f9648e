import Foundation
import TransferProtocol

/// Shows waited-for jobs on stderr: on a terminal one progress line per running job, redrawn in
/// place; otherwise one line per state change. When a job ends, a line with its outcome (and the
/// error when it failed).
struct ProgressReporter {
    /// Where the lines go: stderr (beside a command's real output), or stdout (when they are the output).
    enum Output {
        case standardError, standardOutput

        var descriptor: Int32 { self == .standardError ? 2 : 1 }

        func write(_ text: String) {
            switch self {
            case .standardError: StandardError.write(text)
            case .standardOutput: StandardOutput.write(text)
            }
        }
    }

    /// Whether to redraw the lines in place (the output is a terminal).
    let interactive: Bool
    let output: Output
    /// The jobs still shown, in the order they were first seen, and their latest snapshots.
    private var shown: [String] = []
    private var latest: [String: Job] = [:]
    /// What was last reported of each job, so only changes make lines.
    private var reported: [String: (state: JobState, attempts: Int)] = [:]
    private var linesDrawn = 0

    init(interactive: Bool, output: Output = .standardError) {
        self.interactive = interactive
        self.output = output
    }

    /// Reports a job's latest snapshot, while it has not ended.
    mutating func update(_ job: Job) {
        if !shown.contains(job.id) { shown.append(job.id) }
        latest[job.id] = job
        if interactive {
            redraw()
        } else if reported[job.id].map({ $0.state != job.state || $0.attempts != job.attempts }) ?? true {
            output.write(Self.stateLine(job) + "\n")
        }
        reported[job.id] = (job.state, job.attempts)
    }

    /// Replaces a job's progress line with its outcome.
    mutating func finish(_ job: Job) {
        shown.removeAll { $0 == job.id }
        latest[job.id] = nil
        clear()
        output.write(Self.outcomeLine(job) + "\n")
        if interactive { redraw() }
    }

    /// Reports an event: its job's outcome when it ends the job, else its latest snapshot.
    mutating func report(_ event: JobEvent) {
        if event.type.isTerminal { finish(event.job) } else { update(event.job) }
    }

    /// Writes a line about the connection on stderr, above the progress lines.
    mutating func notice(_ line: String) {
        clear()
        StandardError.writeLine(line)
        if interactive { redraw() }
    }

    /// Removes the progress lines before an error is printed.
    mutating func abandon() {
        clear()
    }

    /// `job ID completed: 1.0 MiB in 3s`, `transferctl: job ID failed: …`, `transferctl: job ID was cancelled`.
    static func outcomeLine(_ job: Job) -> String {
        let id = TerminalText.printable(job.id)
        switch job.state {
        case .completed where job.unchanged == true:
            return "job \(id) completed: unchanged on the server (304), \(TerminalText.printable(job.destination)) kept as it was"
        case .completed:
            let took = job.elapsedText().map { " in \($0)" } ?? ""
            return "job \(id) completed: \(ByteCountFormatting.string(job.transferredBytes))\(took)"
        case .failed:
            let reason = job.error.map { TerminalText.printable($0.message) } ?? "no reason given"
            return "transferctl: job \(id) failed: \(reason)"
        case .cancelled:
            return "transferctl: job \(id) was cancelled"
        case .queued, .running, .waiting:
            return stateLine(job)
        }
    }

    /// `job ID: running  512.0 MiB/1.5 GiB  33.3%  12.3 MiB/s  ETA 1m20s`
    static func progressLine(_ job: Job) -> String {
        var parts = [stateLine(job)]
        if job.state == .running || job.transferredBytes > 0 {
            parts.append(job.sizeText)
            if job.totalBytes != nil { parts.append(job.percentText) }
        }
        if job.state == .running {
            parts.append(job.rateText)
            if job.totalBytes != nil { parts.append("ETA " + (job.etaText ?? "-")) }
        }
        return parts.joined(separator: "  ")
    }

    /// `job ID: running`, with the attempt once there was more than one; while waiting, why and
    /// until when: `job ID: waiting (attempt 2 failed: …; next attempt in 4s)`.
    static func stateLine(_ job: Job, now: Date = Date()) -> String {
        var detail = ""
        if job.state == .running, job.attempts > 1 {
            detail = " (attempt \(job.attempts))"
        } else if job.state == .waiting {
            let reason = job.error.map { TerminalText.printable($0.message) } ?? "no reason given"
            let next = job.nextAttemptAt.flatMap { DurationFormatting.string(interval: max(0, $0.timeIntervalSince(now))) }.map { "; next attempt in " + $0 } ?? ""
            detail = " (attempt \(job.attempts) failed: \(reason)\(next))"
        }
        return "job \(TerminalText.printable(job.id)): \(job.stateText)\(detail)"
    }

    /// Draws one line per shown job below the text before it, replacing the previous drawing.
    private mutating func redraw() {
        // Stay short of the last column so the terminal never wraps a line.
        let width = max(Terminal.columns(output.descriptor) - 1, 10)
        var text = linesDrawn > 0 ? "\u{1B}[\(linesDrawn)A\r" : "\r"
        for id in shown {
            guard let job = latest[id] else { continue }
            let line = Self.progressLine(job)
            text += (line.count > width ? String(line.prefix(width - 1)) + "…" : line) + "\u{1B}[K\n"
        }
        text += "\u{1B}[J"
        output.write(text)
        linesDrawn = shown.count
    }

    private mutating func clear() {
        guard linesDrawn > 0 else { return }
        output.write("\u{1B}[\(linesDrawn)A\r\u{1B}[J")
        linesDrawn = 0
    }
}
