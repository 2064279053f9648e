import Foundation
import Logging
import TransferCore
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

// The job-table benchmarks' helper (Tests/Benchmarks/jobtable.sh):
//
//   transferd-bench fill-journal STATE_DIR COUNT OWNER DEST_DIR [STATE [URL_PREFIX [FIRST]]]
//       writes COUNT downloads of OWNER into the journal of STATE_DIR, as the daemon would have
//       written them, and exits. STATE: `completed` (the default) or `queued` (submitted, not yet
//       started); their URLs are URL_PREFIX followed by a number (default
//       http://127.0.0.1:8080/files/artifact-); FIRST numbers the first job (0), so that a second
//       fill adds jobs beside those of a first
//   transferd-bench submit-load SOCKET CLIENTS IN_FLIGHT JOBS URLS DEST_DIR
//       CLIENTS connections each keep IN_FLIGHT submits pipelined until JOBS were accepted in
//       all; URLS is one URL or several separated by commas, taken in turn; prints
//       "seconds submits_per_second"
//   transferd-bench batch SOCKET JOBS URL DEST_DIR
//       one JSON-RPC batch of JOBS submits; prints "seconds"
//   transferd-bench codec COUNT
//       encodes a job's journal record and decodes a submit's request line COUNT times each, as
//       every submit does; prints "encode_ns decode_ns" per operation
//   transferd-bench urlsession-fetch LIST DEST_DIR PARALLEL durable|plain
//       downloads an aria2c input list through one bare URLSession, PARALLEL at a time, into
//       DEST_DIR: the small-files row's floor (URLSessionFloor.swift); prints "seconds cpu_seconds"
//   transferd-bench ready TRANSFERD_ARGS...
//       starts transferd with NOTIFY_SOCKET set, waits for READY=1, reads its RSS, stops it;
//       prints "ready_seconds rss_kib"

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("transferd-bench: \(message)\n".utf8))
    exit(1)
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// How a filled job is recorded: finished, or waiting in the queue.
enum FilledState: String {
    case completed, queued
}

func fillJournal(
    stateDirectory: String, count: Int, owner: UInt32, destinations: String, state: FilledState = .completed,
    urlPrefix: String = "http://127.0.0.1:8080/files/artifact-", first: Int = 0
) async throws {
    let journal = try Journal(directory: stateDirectory, logger: Logger(label: "fill", factory: { _ in SwiftLogNoOpLogHandler() }))
    let template = #"""
        {"attempts":1,"checkpoint_bytes":1048576,"created_at":"2026-11-23T10:00:00.000Z","destination":"/x","event_seq":1,"final_url":"http://127.0.0.1/x","finished_at":"2026-11-23T10:00:01.250Z","headers":{},"id":"x","id_chosen_by_client":false,"order":1,"overwrite":false,"owner":0,"owner_group":0,"partial_inode":1234567,"sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","started_at":"2026-11-23T10:00:00.010Z","state":"completed","total_bytes":1048576,"url":"http://127.0.0.1/x","validator":"\"65f1a2b3-100000\""}
        """#
    var job = try WireCoding.decoder().decode(JobRecord.self, from: Data(template.utf8))
    // Encoded once by the daemon's own encoder, then the varying fields are filled into the text
    // (encoding a million records one by one would take minutes).
    job.id = "@ID@"
    job.order = 424_242_424_242
    job.owner = owner
    job.ownerGroup = owner
    job.url = urlPrefix + "@N@"
    job.finalUrl = job.url
    if state == .queued {
        // As a submit leaves it: nothing fetched, nothing decided.
        job.state = .queued
        job.attempts = 0
        job.checkpointBytes = 0
        job.totalBytes = nil
        job.sha256 = nil
        job.validator = nil
        job.finalUrl = nil
        job.partialInode = nil
        job.startedAt = nil
        job.finishedAt = nil
    }
    job.destination = "\(destinations)/artifact-@N@.bin"
    job.eventSeq = 434_343_434_343
    let pattern = String(decoding: try WireCoding.encoder().encode(job), as: UTF8.self)
    var changes: [Journal.Change] = []
    for index in first..<(first + count) {
        // 15 hex digits, as the daemon generates them.
        let id = String((UInt64(index) &* 0x9E37_79B9_7F4A_7C15) >> 4, radix: 16).leftPadded(15)
        let text = pattern.replacingOccurrences(of: "@ID@", with: id).replacingOccurrences(of: "@N@", with: "\(index)")
            .replacingOccurrences(of: "424242424242", with: "\(index + 1)").replacingOccurrences(of: "434343434343", with: "\(index + 1)")
        changes.append(.put(key: JobRecord.journalKey(id), value: Array(text.utf8)))
        if changes.count == 10_000 {
            journal.write(changes)
            changes = []
        }
    }
    journal.write(changes)
    try await journal.sync()
}

extension String {
    func leftPadded(_ length: Int) -> String { count >= length ? self : String(repeating: "0", count: length - count) + self }
}

/// A blocking Unix socket connection with a line reader.
final class Connection {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    init(path: String) {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected != 0 { fail("cannot connect to \(path): \(String(cString: strerror(errno)))") }
    }

    func send(_ text: String) {
        var bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let sent = bytes.withUnsafeMutableBytes { Glibc.send(fd, $0.baseAddress! + done, $0.count - done, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { fail("send: \(String(cString: strerror(errno)))") }
            done += sent
        }
    }

    func readLine() -> String {
        while true {
            if let newline = buffer[start...].firstIndex(of: 10) {
                let line = String(decoding: buffer[start..<newline], as: UTF8.self)
                start = newline + 1
                if start > 1 << 20 {
                    buffer.removeFirst(start)
                    start = 0
                }
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { fail("the daemon closed the connection") }
            buffer += chunk[..<count]
        }
    }
}

func submitLine(_ number: Int, client: Int, url: String, directory: String) -> String {
    #"{"jsonrpc":"2.0","id":\#(number),"method":"submit","params":{"url":"\#(url)?c\#(client)n\#(number)","destination":"\#(directory)/c\#(client)-\#(number)"}}"# + "\n"
}

/// The URL submit `number` of a client uses: the list's URLs in turn.
func pick(_ urls: [String], _ number: Int) -> String { urls[number % urls.count] }

func submitLoad(socket path: String, clients: Int, inFlight: Int, jobs: Int, urls: [String], directory: String) {
    let perClient = jobs / clients
    let done = DispatchGroup()
    let started = now()
    for client in 0..<clients {
        done.enter()
        Thread {
            let connection = Connection(path: path)
            var sent = 0
            var first = ""
            while sent < min(inFlight, perClient) {
                first += submitLine(sent, client: client, url: pick(urls, sent), directory: directory)
                sent += 1
            }
            connection.send(first)
            for _ in 0..<perClient {
                let answer = connection.readLine()
                if !answer.contains(#""result""#) { fail("a submit was refused: \(answer.prefix(300))") }
                if sent < perClient {
                    connection.send(submitLine(sent, client: client, url: pick(urls, sent), directory: directory))
                    sent += 1
                }
            }
            close(connection.fd)
            done.leave()
        }.start()
    }
    done.wait()
    let seconds = now() - started
    print(String(format: "%.3f %.0f", seconds, Double(perClient * clients) / seconds))
}

func batch(socket path: String, jobs: Int, url: String, directory: String) {
    let calls = (0..<jobs).map { submitLine($0, client: 0, url: url, directory: directory).dropLast() }
    let line = "[" + calls.joined(separator: ",") + "]\n"
    let connection = Connection(path: path)
    let started = now()
    connection.send(line)
    let answer = connection.readLine()
    let seconds = now() - started
    guard answer.hasPrefix("["), !answer.contains(#""error""#) else { fail("the batch was not accepted whole: \(answer.prefix(300))") }
    print(String(format: "%.3f", seconds))
}

func ready(_ arguments: [String]) {
    let notify = "/tmp/transferd-bench-notify-\(getpid()).sock"
    unlink(notify)
    let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in notify.utf8.enumerated() { raw[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if bound != 0 { fail("bind \(notify): \(String(cString: strerror(errno)))") }
    defer { unlink(notify) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("TRANSFERD_") }
    environment["NOTIFY_SOCKET"] = notify
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    let started = now()
    do { try process.run() } catch { fail("cannot start \(arguments[0]): \(error)") }
    var message = [UInt8](repeating: 0, count: 4096)
    while true {
        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        if poll(&poller, 1, 120_000) <= 0 { process.terminate(); fail("no READY=1 within 120 s") }
        let count = message.withUnsafeMutableBytes { recv(listener, $0.baseAddress, $0.count, 0) }
        if count > 0, String(decoding: message[..<count], as: UTF8.self).split(separator: "\n").contains("READY=1") { break }
    }
    let seconds = now() - started
    let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
    let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?.split(separator: " ").dropFirst().first ?? "0"
    process.terminate()
    process.waitUntilExit()
    print(String(format: "%.3f %@", seconds, String(rss)))
}

/// The codec work of one submit, alone: its job's journal record encoded, its request line decoded
/// (`RequestDecoder`, then the params). Prints nanoseconds per operation.
func codec(count: Int) {
    let line = Data(
        #"{"jsonrpc":"2.0","id":17,"method":"submit","params":{"url":"http://127.0.0.1:8080/files/artifact-17.bin","destination":"/srv/out/artifact-17.bin","id":"artifact-17","create_directories":true,"headers":{"Authorization":"Bearer x"}}}"#
            .utf8)
    let template = #"""
        {"attempts":0,"checkpoint_bytes":0,"created_at":"2026-11-23T10:00:00.000Z","destination":"/srv/out/artifact-17.bin","event_seq":1,"headers":{},"id":"artifact-17","id_chosen_by_client":true,"order":17,"overwrite":false,"owner":1000,"owner_group":1000,"state":"queued","url":"http://127.0.0.1:8080/files/artifact-17.bin"}
        """#
    guard let job = try? WireCoding.decoder().decode(JobRecord.self, from: Data(template.utf8)) else { fail("codec: the record template does not decode") }
    var bytes = 0
    let encodeStart = now()
    for _ in 0..<count { bytes &+= (try? WireCoding.bytes(job))?.count ?? 0 }
    let encodeSeconds = now() - encodeStart
    let decoder = RequestDecoder(methods: [Submit.name])
    let decodeStart = now()
    for _ in 0..<count {
        guard let request = try? decoder.decode(line), let params = try? request.params(for: Submit.self)
        else { fail("codec: the request does not decode") }
        bytes &+= params.url.utf8.count
    }
    let decodeSeconds = now() - decodeStart
    print(String(format: "%.0f %.0f", encodeSeconds * 1e9 / Double(count), decodeSeconds * 1e9 / Double(count)), bytes > 0 ? "" : "-")
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: see the top of Tests/Benchmarks/BenchTool/main.swift") }
switch arguments[1] {
case "fill-journal" where (6...9).contains(arguments.count):
    let usage = "fill-journal STATE_DIR COUNT OWNER DEST_DIR [completed|queued [URL_PREFIX [FIRST]]]"
    guard let count = Int(arguments[3]), let owner = UInt32(arguments[4]),
        let state = arguments.count > 6 ? FilledState(rawValue: arguments[6]) : .completed,
        let first = arguments.count > 8 ? Int(arguments[8]) : 0
    else { fail(usage) }
    let prefix = arguments.count > 7 ? arguments[7] : "http://127.0.0.1:8080/files/artifact-"
    do {
        try await fillJournal(
            stateDirectory: arguments[2], count: count, owner: owner, destinations: arguments[5], state: state, urlPrefix: prefix, first: first)
    } catch {
        fail("\(error)")
    }
case "submit-load" where arguments.count == 8:
    guard let clients = Int(arguments[3]), let inFlight = Int(arguments[4]), let jobs = Int(arguments[5]) else { fail("submit-load SOCKET CLIENTS IN_FLIGHT JOBS URL DIR") }
    let urls = arguments[6].split(separator: ",").map(String.init)
    guard !urls.isEmpty else { fail("submit-load: no URL given") }
    submitLoad(socket: arguments[2], clients: clients, inFlight: inFlight, jobs: jobs, urls: urls, directory: arguments[7])
case "batch" where arguments.count == 6:
    guard let jobs = Int(arguments[3]) else { fail("batch SOCKET JOBS URL DIR") }
    batch(socket: arguments[2], jobs: jobs, url: arguments[4], directory: arguments[5])
case "codec" where arguments.count == 3:
    guard let count = Int(arguments[2]), count > 0 else { fail("codec COUNT") }
    codec(count: count)
case "urlsession-fetch" where arguments.count == 6:
    guard let parallel = Int(arguments[4]), parallel > 0, ["durable", "plain"].contains(arguments[5]) else {
        fail("urlsession-fetch LIST DEST_DIR PARALLEL durable|plain")
    }
    urlSessionFetch(list: arguments[2], directory: arguments[3], parallel: parallel, durable: arguments[5] == "durable")
case "ready" where arguments.count >= 3:
    ready(Array(arguments.dropFirst(2)))
default:
    fail("unknown command or wrong arguments: \(arguments.dropFirst().joined(separator: " "))")
}
