import Foundation
import TransferProtocol

/// Shows a waited-for job on stderr: on a terminal one line redrawn in place, otherwise one
/// line per state change; at the end a summary, and the error when the job failed.
struct ProgressReporter {
    /// Whether to redraw a single line in place (stderr is a terminal).
    let interactive: Bool
    private var lastState: JobState?
    private var lastAttempts = 0
    private var lineDrawn = false

    init(interactive: Bool) {
        self.interactive = interactive
    }

    /// Reports the job's latest snapshot.
    mutating func update(_ job: Job) {
        if interactive {
            draw(Self.progressLine(job))
        } else if !job.state.isTerminal, job.state != lastState || job.attempts != lastAttempts {
            StandardError.writeLine(Self.stateLine(job))
        }
        lastState = job.state
        lastAttempts = job.attempts
    }

    /// Replaces the progress line with the job's outcome.
    mutating func finish(_ job: Job) {
        clear()
        let id = TerminalText.printable(job.id)
        switch job.state {
        case .completed:
            let took = job.elapsedText().map { " in \($0)" } ?? ""
            StandardError.writeLine("job \(id) completed: \(ByteCountFormatting.string(job.bytesReceived))\(took)")
        case .failed:
            let reason = job.error.map { TerminalText.printable($0.message) } ?? "no reason given"
            StandardError.writeLine("transferctl: job \(id) failed: \(reason)")
        case .cancelled:
            StandardError.writeLine("transferctl: job \(id) was cancelled")
        case .queued, .running, .waiting:
            StandardError.writeLine("job \(id): \(job.state.rawValue)")
        }
    }

    /// Removes the progress line before an error is printed.
    mutating func abandon() {
        clear()
    }

    /// `job ID: running  512.0 MiB/1.5 GiB  33.3%  12.3 MiB/s  ETA 1m20s`
    static func progressLine(_ job: Job) -> String {
        var parts = [stateLine(job)]
        if job.state == .running || job.bytesReceived > 0 {
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
        return "job \(TerminalText.printable(job.id)): \(job.state.rawValue)\(detail)"
    }

    private mutating func draw(_ line: String) {
        // Stay short of the last column so the terminal never wraps the line.
        let width = max(Terminal.columns(2) - 1, 10)
        let shown = line.count > width ? String(line.prefix(width - 1)) + "…" : line
        StandardError.write("\r" + shown + "\u{1B}[K")
        lineDrawn = true
    }

    private mutating func clear() {
        guard lineDrawn else { return }
        StandardError.write("\r\u{1B}[K")
        lineDrawn = false
    }
}
