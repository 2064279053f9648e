import ArgumentParser
import TransferProtocol

/// `transferctl submit URL DEST`, `submit -O [-d DIR] URL...`, `submit -i FILE`: hands downloads
/// to transferd (several in one batch, accepted in one durable step) and prints the jobs' ids.
struct SubmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "submit",
        abstract: "Queue a download of URL into the file DEST, or of several URLs under their own names.",
        usage: """
            transferctl submit URL DEST [<options>]
            transferctl submit URL -o DEST [<options>]
            transferctl submit -O [-d DIR] [--create-dirs] URL... [<options>]
            transferctl submit -i FILE [-d DIR] [--create-dirs] [<options>]
            """,
        discussion: """
            Prints the job's id (with --json, the job). With --wait, shows progress on stderr \
            until the job ends, then prints the id and exits 0 if it completed, 1 if it failed \
            or was cancelled.

            -o DEST (as curl's -o/--output) names the file instead of the second argument. \
            With -O (as curl's), each URL is saved under the last segment of its path, \
            percent-decoded and made safe (no /, no leading . or -; index.html when empty), \
            in --output-dir or the current directory. With -i FILE (aria2's input-file format), \
            each URL of the file is downloaded, with its indented out=, dir=, header= and \
            checksum=sha-256= lines. Several downloads go in one request and are accepted \
            together; one line per download is printed, "ID DEST", and refusals are reported \
            on stderr with their URL (exit 4 when any was refused).
            """
    )

    @Argument(help: ArgumentHelp(
        "The http or https URL and the file to create (a relative DEST is taken from --output-dir or the current directory); with -O or -i, only URLs.",
        valueName: "url"))
    var arguments: [String] = []

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp("The file to create, as curl's -o (instead of DEST after the URL).", valueName: "file"))
    var output: String?

    @Flag(
        name: [.customShort("O"), .customLong("remote-name")],
        help: "Name each file after the last segment of its URL's path (may be repeated, as with curl).")
    var remoteName: Int

    @Option(
        name: [.customShort("d"), .customLong("output-dir")],
        help: ArgumentHelp("The directory downloads go to (default: the current directory).", valueName: "dir"))
    var outputDirectory: String?

    @Flag(help: "Create the destination's missing directories (inside the daemon's allowed roots, owned by you).")
    var createDirs = false

    @Option(
        name: [.customShort("i"), .customLong("input-file")],
        help: ArgumentHelp("Download the URLs listed in this file (aria2's input-file format; - reads stdin).", valueName: "file"))
    var inputFile: String?

    @Option(help: ArgumentHelp(
        "Your own id for the job; submitting the same request with the same id again returns the job while it is unfinished.",
        valueName: "id"))
    var id: String?

    @Flag(help: "When the job named by --id has ended, start it again under that id (else the submit is refused).")
    var replace = false

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("A request header, as 'Name: value'. Repeat for several.", valueName: "name: value"))
    var headers: [String] = []

    @Flag(help: "Replace DEST if it already exists.")
    var overwrite = false

    @Flag(help: ArgumentHelp(
        "Ask the server first whether the file changed since DEST was downloaded (If-None-Match, If-Modified-Since, as wget -N or "
            + "curl -z): unchanged, the job completes as such and DEST stays; changed, the new version replaces DEST."))
    var conditional = false

    @Option(help: ArgumentHelp(
        "The file's expected SHA-256 (64 hex digits, as sha256sum prints it); a different file fails the job and is not kept.",
        valueName: "hex"))
    var sha256: String?

    @Option(help: ArgumentHelp(
        "The file's expected size in bytes; checked against the server's and the destination's free space.",
        valueName: "bytes"))
    var size: Int64?

    @Option(help: ArgumentHelp(
        "Fetch the file over up to this many connections at once, each a range of it (1-16, as aria2's -x/-s; "
            + "default: the daemon's segments). Pays off where a server caps each connection.",
        valueName: "n"))
    var segments: Int?

    @OptionGroup var jobOptions: JobOptions

    @OptionGroup var clientOptions: ClientOptions

    /// Whether the positional arguments are URLs only (with -O or -i), not URL DEST.
    private var urlsOnly: Bool { remoteName > 0 || inputFile != nil }

    func validate() throws {
        if replace, id == nil { throw ValidationError("--replace starts the job named by --id again: give --id too") }
        if let segments, !Limits.Job.segments.contains(segments) {
            throw ValidationError("--segments \(segments): give 1 to \(Limits.Job.segments.upperBound) connections")
        }
        if let output {
            if output.isEmpty { throw ValidationError("-o needs the file to create") }
            if urlsOnly { throw ValidationError("-o names one file; -O and -i name each file after its URL: give one or the other") }
            switch arguments.count {
            case 0: throw ValidationError("give the URL to download into \(output): transferctl submit URL -o \(output)")
            case 1: break
            default: throw ValidationError("-o names the file, so give only the URL (for several URLs, use -O)")
            }
            if arguments[0].isEmpty { throw ValidationError("URL must not be empty") }
        } else if urlsOnly {
            if arguments.isEmpty && inputFile == nil { throw ValidationError("-O needs at least one URL") }
            if arguments.contains(where: \.isEmpty) { throw ValidationError("URL must not be empty") }
            if inputFile != nil || arguments.count > 1 {
                for (name, given) in [("--id", id != nil), ("--sha256", sha256 != nil), ("--size", size != nil)] where given {
                    throw ValidationError("\(name) applies to one download, not to several (in an input file, give checksum=sha-256=HEX per URL)")
                }
            }
        } else {
            switch arguments.count {
            case 0: throw ValidationError("give the URL and the file to create: transferctl submit URL DEST (or -O to name it after the URL)")
            case 1: throw ValidationError("give the file to create after the URL, or -O to name it after the URL (in --output-dir or the current directory)")
            case 2: break
            default: throw ValidationError("several URLs need -O (each is saved under its own name) or -i FILE; for one URL give URL DEST")
            }
            if arguments[0].isEmpty { throw ValidationError("URL must not be empty") }
            if arguments[1].isEmpty { throw ValidationError("DEST must not be empty") }
        }
        if let outputDirectory, outputDirectory.isEmpty { throw ValidationError("--output-dir needs a directory") }
        if let id, !Limits.isValidName(id) {
            // The daemon's rule, checked here so that a bad id is a usage error (exit 2).
            throw ValidationError("--id must be 1 to \(Limits.maxJobIDLength) characters of A-Z a-z 0-9 . _ -, and not . or .., e.g. nightly-db.2024")
        }
        _ = try RequestHeader.dictionary(parsing: headers)
        if let sha256, sha256.utf8.count != 64 || !sha256.allSatisfy(\.isHexDigit) {
            throw ValidationError("--sha256 must be 64 hexadecimal digits, as printed by sha256sum")
        }
        if let size, size < 0 { throw ValidationError("--size must not be negative") }
    }

    func run() async throws {
        let downloads = try plan()
        if downloads.count == 1, !urlsOnly, let only = downloads.first {
            try await runOne(only.params)
        } else {
            try await runMany(downloads)
        }
    }

    /// One download: its id (or the job as JSON); a refusal is an error (exit 4).
    private func runOne(_ params: TransferProtocol.Submit.Params) async throws {
        let client = try clientOptions.connect(timeout: jobOptions.wait ? nil : .seconds(60))
        try jobOptions.finish(try client.call(TransferProtocol.Submit.self, params).job, client: client, options: clientOptions)
    }

    /// Several downloads, sent in batches (one unless the list is very long): "ID DEST" per
    /// accepted one (with --json, the job, or the URL and the error), the refusals on stderr.
    private func runMany(_ downloads: [PlannedDownload]) async throws {
        guard !downloads.isEmpty else {
            throw TransferCtlError.usage("transferctl: \(inputFile ?? "the input file") lists no URL")
        }
        let client = try clientOptions.connect(timeout: jobOptions.wait ? nil : .seconds(120))
        let (wait, json) = (jobOptions.wait, jobOptions.json)
        var accepted: [Job] = []
        var refused = 0
        for batch in try SubmitBatches.split(downloads.map(\.params)) {
            let results = try client.callBatch(TransferProtocol.Submit.self, batch.map { downloads[$0].params })
            for (index, result) in zip(batch, results) {
                let download = downloads[index]
                switch result {
                case .success(let answer):
                    accepted.append(answer.job)
                    if json {
                        if !wait { try JSONOutput.print(answer.job) }
                    } else {
                        print("\(answer.job.id) \(TerminalText.printable(answer.job.destination))")
                    }
                case .failure(let error):
                    refused += 1
                    StandardError.writeLine("transferctl: \(TerminalText.printable(download.url)): \(error.message)")
                    if json { try JSONOutput.print(RefusedDownload(url: download.url, destination: download.params.destination ?? "", error: error)) }
                }
            }
        }
        var unsuccessful = false
        if wait, !accepted.isEmpty {
            let finished = try JobWaiter(client: client, options: clientOptions).wait(for: accepted.map(\.id))
            for job in finished {
                if json { try JSONOutput.print(job) }
                if job.state != .completed { unsuccessful = true }
            }
        }
        if refused > 0 { throw ExitCode.requestRefused }
        if unsuccessful { throw TransferCtlError.jobUnsuccessful }
    }

    /// The downloads the command line asks for, in order.
    func plan() throws -> [PlannedDownload] {
        let headerFields = try RequestHeader.dictionary(parsing: headers)
        let directory = try outputDirectory.map { try AbsolutePath.resolve($0) }
        let cacert = try jobOptions.cacertPEM()
        func params(url: String, destination: String, headers: [String: String], sha256: String?) -> TransferProtocol.Submit.Params {
            var params = TransferProtocol.Submit.Params(
                url: url, destination: destination, headers: headers.isEmpty ? nil : headers, overwrite: overwrite ? true : nil,
                id: id, sha256: sha256, size: size, retry: jobOptions.retry, session: jobOptions.session,
                createDirectories: createDirs ? true : nil)
            params.replace = replace ? true : nil
            (params.notBefore, params.deadline) = jobOptions.times
            params.priority = jobOptions.priority
            params.limitRate = jobOptions.limitRate
            params.cacert = cacert
            params.segments = segments
            params.conditional = conditional ? true : nil
            return params
        }
        func inDirectory(_ directory: String?, _ name: String) throws -> String {
            if name.hasPrefix("/") { return name }
            guard let directory else { return try AbsolutePath.resolve(name) }
            return AbsolutePath.resolve(name, currentDirectory: directory)
        }
        guard urlsOnly else {
            let url = arguments[0]
            let destination = try inDirectory(directory, output ?? arguments[1])
            return [PlannedDownload(url: url, params: params(url: url, destination: destination, headers: headerFields, sha256: sha256))]
        }
        var downloads: [PlannedDownload] = []
        if let inputFile {
            let list = try InputFile.read(inputFile)
            for entry in list.entries {
                if entry.ignoredMirrors > 0 {
                    StandardError.writeLine(
                        "transferctl: \(inputFile):\(entry.line): only the first URL is used; mirrors (the \(entry.ignoredMirrors) other URL\(entry.ignoredMirrors == 1 ? "" : "s") after a tab) are not supported")
                }
                var entryHeaders = headerFields
                for (name, value) in try RequestHeader.dictionary(parsing: entry.headers, source: "\(inputFile):\(entry.line): header=") {
                    // The file's header replaces the command line's of the same name.
                    entryHeaders = entryHeaders.filter { $0.key.lowercased() != name.lowercased() }
                    entryHeaders[name] = value
                }
                // As aria2 reads it: a relative dir= is taken from the current directory, not from -d.
                let entryDirectory = try entry.dir.map { try inDirectory(nil, $0) } ?? directory
                let destination = try inDirectory(entryDirectory, entry.out ?? RemoteName.of(entry.url))
                downloads.append(PlannedDownload(url: entry.url, params: params(url: entry.url, destination: destination, headers: entryHeaders, sha256: entry.sha256)))
            }
        }
        for url in arguments {
            downloads.append(PlannedDownload(url: url, params: params(url: url, destination: try inDirectory(directory, RemoteName.of(url)), headers: headerFields, sha256: sha256)))
        }
        return downloads
    }
}

/// One download of a submit: what the user gave as its URL (for messages) and its request.
struct PlannedDownload {
    var url: String
    var params: TransferProtocol.Submit.Params
}

/// A refused download as `submit --json` prints it among the accepted jobs.
struct RefusedDownload: Encodable {
    var url: String
    var destination: String
    var error: RPCError
}
