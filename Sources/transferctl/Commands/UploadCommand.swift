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
        abstract: "Queue an upload of FILE to URL (PUT by default), or of a form with a file (-F, as curl's).",
        usage: """
            transferctl upload [<options>] <file> <url>
              transferctl upload [<options>] -F <name>=@<file> [-F <name>=<value> ...] <url>
            """,
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

            With -F, the file is sent as one part of a multipart/form-data body (POST unless -X \
            says otherwise), beside text fields, in the order given, as curl -F sends them: \
            -F 'file=@photo.jpg;type=image/jpeg;filename=cover.jpg' names the file's part, \
            -F 'key=value' adds a field (the value as written), -F 'policy=<policy.txt' a field \
            read from a file. An S3 presigned POST takes its fields first and the file last. A \
            form upload is sent whole again after an interruption.
            """
    )

    @Argument(help: ArgumentHelp("The file to send (not with -F, which names it), then the http or https URL to send it to.", valueName: "file> <url"))
    var operands: [String] = []

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: ArgumentHelp("A form part, as curl's -F: name=@FILE[;type=TYPE][;filename=NAME] for the file (once), name=value, or name=<FILE.", valueName: "name=content"))
    var form: [String] = []

    /// The file to send and the URL (the file from -F when a form is given).
    private var fileAndURL: (file: String, url: String) {
        get throws {
            if form.isEmpty {
                guard operands.count == 2 else { throw ValidationError("give the FILE to send and the URL to send it to (transferctl upload FILE URL)") }
                return (operands[0], operands[1])
            }
            guard operands.count == 1 else {
                throw ValidationError("with -F, give only the URL: the file is the form part written name=@FILE (for example -F file=@\(operands.first ?? "photo.jpg"))")
            }
            return (try FormOption.file(in: form), operands[0])
        }
    }

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
        let (file, url) = try fileAndURL
        if file.isEmpty { throw ValidationError("FILE must not be empty") }
        if url.isEmpty { throw ValidationError("URL must not be empty") }
        if !form.isEmpty {
            if contentType != nil { throw ValidationError("with -F, give the file's type in its part (-F 'file=@FILE;type=image/png'), not with --content-type") }
            if let resumable, resumable.lowercased() != "off" { throw ValidationError("a form upload (-F) is sent whole: leave --resumable out") }
        }
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
        let (file, url) = try fileAndURL
        let parts = try form.isEmpty ? nil : FormOption.parts(form)
        let path = try AbsolutePath.resolve(file)
        // The file first: a file that cannot be read is the user's error (exit 2), daemon or not.
        let fd = try DescriptorHandoff.open(path)
        let reply: UploadHandoff.Reply
        let client: ControlClient
        do {
            defer { close(fd) }
            client = try clientOptions.connect(timeout: jobOptions.wait ? nil : .seconds(60))
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
        params.form = parts
        try jobOptions.finish(try client.call(TransferProtocol.Submit.self, params).job, client: client, options: clientOptions)
    }
}
