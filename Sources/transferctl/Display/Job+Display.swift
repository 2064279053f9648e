import Foundation
import TransferProtocol

/// A job's numbers as people read them, shared by the table, the detail view and `--wait`.
extension Job {
    /// Bytes received for a download, bytes sent for an upload.
    var transferredBytes: Int64 { bytesSent ?? bytesReceived }

    /// The state as the table and the detail view show it: `paused` for a paused job,
    /// `running (pausing)` while its transfer stops.
    var stateText: String {
        guard paused == true else { return state.rawValue }
        return state == .queued ? "paused" : "\(state.rawValue) (pausing)"
    }

    /// Where the bytes go: the destination of a download, the URL of an upload.
    var target: String { kind == .upload ? "\(source ?? "-") -> \(url)" : destination }

    /// Percent done with one decimal (`33.3%`), rounded down; `-` while the total is unknown.
    var percentText: String {
        guard let total = totalBytes, total >= 0 else { return "-" }
        if total == 0 { return state == .completed ? "100.0%" : "0.0%" }
        let fraction = min(max(Double(transferredBytes) / Double(total), 0), 1)
        let tenths = Int((fraction * 1000).rounded(.down))
        return "\(tenths / 10).\(tenths % 10)%"
    }

    /// `received/total` in human units, or just what was received while the total is unknown.
    var sizeText: String {
        let received = ByteCountFormatting.string(transferredBytes)
        guard let total = totalBytes else { return received }
        return received + "/" + ByteCountFormatting.string(total)
    }

    /// The transfer rate while running (`12.3 MiB/s`), else `-`.
    var rateText: String {
        guard state == .running, let rate = bytesPerSecond else { return "-" }
        return ByteCountFormatting.rate(rate)
    }

    /// Seconds until done at the current rate, when running with a known total and rate.
    var secondsRemaining: Int64? {
        guard state == .running, let total = totalBytes, let rate = bytesPerSecond, rate > 0 else { return nil }
        let remaining = max(0, total - transferredBytes)
        return remaining / rate + (remaining % rate == 0 ? 0 : 1)
    }

    /// Time to go at the current rate (`1m20s`), when it can be told.
    var etaText: String? {
        secondsRemaining.map { DurationFormatting.string(seconds: $0) }
    }

    /// How long the transfer took or has taken so far, from its start to its end or `now`.
    func elapsedText(now: Date = Date()) -> String? {
        guard let startedAt else { return nil }
        return DurationFormatting.string(interval: (finishedAt ?? now).timeIntervalSince(startedAt))
    }
}
