import Foundation
import TransferProtocol

/// One job field by field, for `status ID`: `id:`, `state:`, `url:` and so on, aligned.
struct JobDetail {
    var job: Job

    /// One `label: value` line per field; `eta`, `headers` and `error` only when they apply.
    func render() -> String {
        var fields: [(String, String)] = [
            ("id", TerminalText.printable(job.id)),
            ("state", job.stateText),
            ("priority", (job.priority ?? .normal).rawValue),
            ("url", TerminalText.printable(job.url)),
        ]
        if job.kind == .upload {
            fields += [
                ("kind", "upload"), ("source", TerminalText.printable(job.source ?? "-")), ("method", job.method ?? "PUT"),
                ("sent", receivedText),
            ]
            if let used = job.uploadProtocol { fields.append(("protocol", used == .plain ? "plain (no resume)" : used.rawValue)) }
            if let resource = job.uploadUrl { fields.append(("upload url", TerminalText.printable(resource))) }
        } else {
            fields += [("destination", TerminalText.printable(job.destination)), ("received", receivedText)]
        }
        fields += [
            ("total", job.totalBytes.map(Self.bytesText) ?? "unknown"),
            ("rate", job.rateText),
        ]
        if let limit = job.limitRate { fields.append(("limit rate", ByteCountFormatting.rate(limit))) }
        if let segments = job.segments { fields.append(("segments", Self.connectionsText(job, asked: segments))) }
        if let paced = job.pacedRate { fields.append(("paced at", ByteCountFormatting.rate(paced))) }
        if let warning = job.warning { fields.append(("warning", TerminalText.printable(warning))) }
        if let eta = job.etaText { fields.append(("eta", eta)) }
        fields.append(("attempts", String(job.attempts)))
        if let next = job.nextAttemptAt { fields.append(("next attempt", Self.timestamp(next))) }
        if let notBefore = job.notBefore { fields.append(("not before", Self.timestamp(notBefore))) }
        if let deadline = job.deadline { fields.append(("deadline", Self.timestamp(deadline))) }
        if let sha256 = job.sha256 { fields.append(("sha256", sha256)) }
        if let expected = job.expectedSha256 { fields.append(("expected sha256", expected)) }
        if let expected = job.expectedSize { fields.append(("expected size", Self.bytesText(expected))) }
        if let finalURL = job.finalUrl { fields.append(("final url", TerminalText.printable(finalURL))) }
        if let coding = job.contentEncoding {
            fields.append(("encoding", "\(TerminalText.printable(coding)): the file is the bytes as the server sent them"))
        }
        if !job.headerNames.isEmpty {
            fields.append(("headers", job.headerNames.map(TerminalText.printable).joined(separator: ", ")))
        }
        fields += [
            ("created", Self.timestamp(job.createdAt)),
            ("started", job.startedAt.map(Self.timestamp) ?? "-"),
            ("finished", job.finishedAt.map(Self.timestamp) ?? "-"),
        ]
        if let response = job.response { fields += Self.responseFields(response) }
        if let error = job.error { fields.append((job.state == .waiting ? "last error" : "error", Self.errorText(error))) }

        let width = (fields.map { $0.0.count }.max() ?? 0) + 1
        return fields.map { label, value in
            let head = label + ":"
            return head + String(repeating: " ", count: width - head.count + 1) + value
        }
        .joined(separator: "\n")
    }

    private var receivedText: String {
        let bytes = Self.bytesText(job.transferredBytes)
        return job.totalBytes == nil ? bytes : "\(bytes), \(job.percentText)"
    }

    /// `up to 4 connections`, or the connections used when fewer, and why: `1 connection of the 4
    /// asked: the server does not take ranges`.
    static func connectionsText(_ job: Job, asked: Int) -> String {
        guard let used = job.connections, used < asked else { return "up to \(asked) connections" }
        let reason = job.connectionsReason.map { ": " + TerminalText.printable($0) } ?? ""
        return "\(used) connection\(used == 1 ? "" : "s") of the \(asked) asked\(reason)"
    }

    /// `1.5 GiB (1610612736 bytes)`, or just `512 B` below a KiB.
    private static func bytesText(_ bytes: Int64) -> String {
        let human = ByteCountFormatting.string(bytes)
        return bytes < 1024 ? human : "\(human) (\(bytes) bytes)"
    }

    /// Local time with its offset, e.g. `2026-11-22 11:00:00+01:00`.
    private static func timestamp(_ date: Date) -> String {
        date.formatted(
            Date.ISO8601FormatStyle(dateTimeSeparator: .space, timeZoneSeparator: .colon, timeZone: .current))
    }

    /// The server's answer to a completed upload.
    private static func responseFields(_ response: UploadResponse) -> [(String, String)] {
        var fields = [("response", String(response.status))]
        if let location = response.location { fields.append(("location", TerminalText.printable(location))) }
        if let etag = response.etag { fields.append(("etag", TerminalText.printable(etag))) }
        if let type = response.contentType { fields.append(("content type", TerminalText.printable(type))) }
        if let body = response.body {
            let shown = response.bodyEncoding == "base64" ? "(base64) " + body : body
            fields.append(("body", TerminalText.printable(String(shown.prefix(2000))) + (response.bodyTruncated == true ? " (truncated)" : "")))
        }
        return fields
    }

    private static func errorText(_ error: JobError) -> String {
        // As sent: a newer daemon's code reads better than `unrecognized`.
        var detail = error.rawCode
        if let status = error.httpStatus { detail += ", HTTP \(status)" }
        return "\(TerminalText.printable(error.message)) (\(TerminalText.printable(detail)))"
    }
}
