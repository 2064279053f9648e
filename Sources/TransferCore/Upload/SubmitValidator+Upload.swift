import Foundation
import TransferProtocol

extension SubmitValidator {
    /// The job's kind; a download unless `kind` says upload. Parameters of the other kind are refused.
    static func validateKind(_ params: Submit.Params) throws(CoreError) -> JobKind {
        let kind: JobKind
        if let text = params.kind {
            guard let known = JobKind(rawValue: text) else {
                throw CoreError(.invalidParameter("kind"), "kind '\(text.prefix(40))' is not known: give download (the default) or upload")
            }
            kind = known
        } else {
            kind = .download
        }
        let uploadOnly = [("source", params.source != nil), ("spool", params.spool != nil), ("method", params.method != nil), ("content_type", params.contentType != nil)]
        let downloadOnly = [
            ("destination", params.destination != nil), ("overwrite", params.overwrite != nil), ("size", params.size != nil),
            ("create_directories", params.createDirectories != nil),
        ]
        for (name, given) in kind == .upload ? downloadOnly : uploadOnly where given {
            let other = kind == .upload ? "downloads" : "uploads (\"kind\": \"upload\")"
            throw CoreError(.invalidParameter(name), "\(name) applies to \(other) only: leave it out")
        }
        return kind
    }

    /// An upload's method (PUT when not given).
    static func validateMethod(_ text: String?) throws(CoreError) -> UploadMethod {
        guard let text else { return .put }
        guard let method = UploadMethod(rawValue: text.uppercased()) else {
            throw CoreError(.invalidParameter("method"), "method '\(text.prefix(20))' cannot upload a file: give PUT (the default), POST or PATCH")
        }
        return method
    }

    /// How an upload resumes: `auto` when not given.
    static func validateResumable(_ text: String?) throws(CoreError) -> ResumableMode {
        guard let text else { return .auto }
        guard let mode = ResumableMode(rawValue: text.lowercased()) else {
            throw CoreError(
                .invalidParameter("resumable"),
                "resumable '\(text.prefix(20))' is not a way to resume an upload: give auto (the default), ietf, tus or off")
        }
        return mode
    }

    /// A Content-Type value: printable, bounded, no line breaks (it becomes a header).
    static func validateContentType(_ text: String?) throws(CoreError) {
        guard let text else { return }
        guard !text.isEmpty, text.utf8.count <= 256, text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) else {
            throw CoreError(
                .invalidParameter("content_type"),
                "content_type must be 1 to 256 printable ASCII characters, such as application/octet-stream or text/plain; charset=utf-8")
        }
    }
}
