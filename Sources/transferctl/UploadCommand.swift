import ArgumentParser
import Foundation
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// `transferctl upload FILE URL`: opens FILE with your rights, hands it to transferd (which
/// keeps a synced copy, so the file may change or go right after), and queues its upload.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Queue an upload of FILE to URL (PUT by default).",
        discussion: """
            transferctl opens FILE itself and passes the open file to transferd, which copies \
            it into its spool before answering: the daemon never reads your files with its own \
            rights, and changing or deleting FILE afterwards changes nothing. The copy counts \
            against the daemon's spool quota until the upload ends. Prints the job's id (with \
            --json, the job); with --wait, shows progress on stderr until the job ends, then \
            exits 0 if the server accepted the file (2xx), 1 otherwise. transferctl status ID \
            shows the server's answer (status, Location, ETag, body). An upload to a server that \
            speaks tus 1.0 or the IETF resumable upload protocol continues where the server \
            stopped after a dropped connection or a restart of transferd (--resumable).
            """
    )

    @Argument(help: ArgumentHelp("The file to send.", valueName: "file"))
    var file: String

    @Argument(help: ArgumentHelp("The http or https URL to send it to.", valueName: "url"))
    var url: String

    @Option(
        name: [.customShort("X"), .customLong("request")],
        help: ArgumentHelp("The method: PUT (the default), POST or PATCH.", valueName: "method"))
    var method: String?

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("A request header, as 'Name: value'. Repeat for several.", valueName: "name: value"))
    var headers: [String] = []

    @Option(help: ArgumentHelp("The Content-Type to send (default: application/octet-stream).", valueName: "type"))
    var contentType: String?

    @Option(help: ArgumentHelp(
        "Your own id for the job; submitting the same request with the same id again returns the existing job.",
        valueName: "id"))
    var id: String?

    @Option(help: ArgumentHelp(
        "How an interrupted upload continues: auto (the default: what the server announces), ietf (the IETF "
            + "resumable upload protocol), tus (tus 1.0), or off (send the whole file again).",
        valueName: "mode"))
    var resumable: String?

    @Option(help: ArgumentHelp("The file's expected SHA-256 (64 hex digits): a different file is not accepted.", valueName: "hex"))
    var sha256: String?

    @OptionGroup var jobOptions: JobOptions

    @OptionGroup var clientOptions: ClientOptions

    func validate() throws {
        if file.isEmpty { throw ValidationError("FILE must not be empty") }
        if url.isEmpty { throw ValidationError("URL must not be empty") }
        if let method, UploadMethod(rawValue: method.uppercased()) == nil {
            throw ValidationError("-X must be PUT, POST or PATCH")
        }
        if let resumable, ResumableMode(rawValue: resumable.lowercased()) == nil {
            throw ValidationError("--resumable must be auto, ietf, tus or off")
        }
        if let id, !Limits.isValidName(id) {
            throw ValidationError("--id must be 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, and not . or .., e.g. nightly-db.2024")
        }
        _ = try RequestHeader.dictionary(parsing: headers)
        if let sha256, sha256.utf8.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw ValidationError("--sha256 must be 64 hexadecimal digits, as printed by sha256sum")
        }
    }

    func run() async throws {
        let headerFields = try RequestHeader.dictionary(parsing: headers)
        let path = try AbsolutePath.resolve(file)
        let client = try clientOptions.connect(timeout: jobOptions.wait ? nil : .seconds(60))
        let fd = try DescriptorHandoff.open(path)
        let reply: UploadHandoff.Reply
        do {
            defer { close(fd) }
            reply = try DescriptorHandoff.send(fd, name: path, controlSocket: client.socketPath)
        }
        if let error = reply.error { throw TransferCtlError.refused(error) }
        guard let spool = reply.spool else { throw TransferCtlError.connectionBroken("transferd's upload socket answered without a spool name") }
        var params = TransferProtocol.Submit.Params(
            url: url, destination: nil, headers: headerFields.isEmpty ? nil : headerFields, id: id, sha256: sha256,
            retry: jobOptions.retry, session: jobOptions.session, kind: JobKind.upload.rawValue, source: path, spool: spool,
            method: method?.uppercased(), contentType: contentType, resumable: resumable?.lowercased())
        (params.notBefore, params.deadline) = jobOptions.times
        params.priority = jobOptions.priority
        params.limitRate = jobOptions.limitRate
        params.cacert = try jobOptions.cacertPEM()
        try jobOptions.finish(try client.call(TransferProtocol.Submit.self, params).job, client: client)
    }
}
