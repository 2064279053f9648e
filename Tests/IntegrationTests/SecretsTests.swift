import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Credentials given with a job (headers, a URL's user and password, token query parameters)
/// reach the server but nothing anyone can read back: not the log, not `status`, not events, not errors.
@Suite("Secrets")
struct SecretsTests {
    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    @Test func credentialsNeverAppearInTheLogStatusEventsOrErrors() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0, "denied_hosts": ["127.0.0.2"]])
        defer { daemon.cleanUp() }
        let secret = "hdr-\(UUID().uuidString)"
        let password = "pw-\(UUID().uuidString)"
        let token = "tok-\(UUID().uuidString)"
        let content = TestContent(seed: 501, size: 300_000)
        server.serve("/plain", content: content)
        server.serve("/moved", content: content, behaviour: .redirect(to: server.url("/plain")))
        server.serve("/busy", content: content, behaviour: .status(code: 503, times: 1))
        server.serve("/away", content: content, behaviour: .redirect(to: "http://127.0.0.2:\(server.port)/plain"))
        server.serve("/slow", content: TestContent(seed: 502, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 20_000))
        try await daemon.start(arguments: ["--log-level", "trace"])
        // Every event of every job, as a subscriber reads it.
        let events = try EventStream(socket: daemon.socketPath, .init())

        let headers = ["Authorization": "Bearer \(secret)", "Cookie": "session=\(secret)", "X-Api-Key": secret]
        func url(_ path: String) -> String { "http://user:\(password)@127.0.0.1:\(server.port)\(path)?access_token=\(token)&page=1" }
        var jobs: [String: Job] = [:]
        // Completes; completes after a redirect; completes after a retry; fails (404); is refused on a redirect.
        for path in ["/plain", "/moved", "/busy", "/missing", "/away"] {
            let job = try daemon.submit(
                .init(
                    url: url(path), destination: daemon.destination(String(path.dropFirst())), headers: headers, retry: .init(maxAttempts: 3),
                    session: "secrets"))
            jobs[path] = try await daemon.waitForTerminal(job.id)
        }
        #expect(jobs["/plain"]?.state == .completed)
        #expect(jobs["/moved"]?.state == .completed)
        #expect(jobs["/busy"]?.state == .completed && jobs["/busy"]?.attempts == 2, "\(String(describing: jobs["/busy"]))")
        #expect(jobs["/missing"]?.error?.code == .httpStatus)
        #expect(jobs["/away"]?.error?.code == .hostNotAllowed)
        #expect(jobs["/plain"]?.headerNames == ["Authorization", "Cookie", "X-Api-Key"])
        // The credentials did go where they belong, so what follows checks hiding, not losing.
        let sent = server.requests(for: "/plain")
        #expect(sent.contains { $0.header("Authorization") == "Bearer \(secret)" && $0.uri.contains(token) }, "\(sent)")

        // A running download's partial file is private too.
        let slow = try daemon.submit(.init(url: url("/slow"), destination: daemon.destination("slow"), headers: headers))
        let partial = daemon.directory + "/out/.slow.\(slow.id).part"
        try await waitUntil("the partial file of the running download") { FileManager.default.fileExists(atPath: partial) }
        #expect(mode(partial) == 0o600)
        #expect(mode(daemon.stateDirectory + "/journal.log") == 0o600)
        #expect(mode(daemon.stateDirectory) == 0o700)

        let client = try daemon.client()
        try client.sendLine(Array(#"{"jsonrpc":"2.0","id":1,"method":"status"}"#.utf8))
        let rawStatus = String(decoding: try client.readLine(), as: UTF8.self)
        #expect(rawStatus.contains("access_token=REDACTED") && rawStatus.contains("header_names"), "\(rawStatus)")
        var views = ["the raw status answer": rawStatus]
        let commands = [["status", "--json"], ["status"], ["status", slow.id, "--json"]] + jobs.values.map { ["status", $0.id] }
        for arguments in commands {
            let run = try await runTransferctl(arguments + ["--socket", daemon.socketPath])
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            views["transferctl \(arguments.joined(separator: " "))"] = run.stdout + run.stderr
        }
        _ = try client.call(Cancel.self, .init(id: slow.id))
        var eventLines: [String] = []
        do {
            while !(eventLines.last.map { $0.contains(#""type":"cancelled""#) && $0.contains(slow.id) } ?? false) {
                eventLines.append(String(decoding: try events.client.readLine(), as: UTF8.self))
            }
        } catch {
            Issue.record("the event stream ended (\(error)) after \(eventLines.count) lines, the last: \(eventLines.suffix(2))")
        }
        #expect(eventLines.count > 10 && eventLines.contains { $0.contains("header_names") })
        views["the events"] = eventLines.joined(separator: "\n")
        let replay = try await runTransferctl(["events", "--session", "secrets", "--json", "--socket", daemon.socketPath])
        #expect(replay.stdout.split(separator: "\n").count == 5, "\(replay.stdout)")
        views["the session's replayed events"] = replay.stdout
        views["the daemon's log"] = daemon.log
        #expect(daemon.log.contains("job accepted"), "the log holds what the daemon did")
        for (view, text) in views {
            for (what, value) in [("the header secret", secret), ("the URL's password", password), ("the access token", token)] {
                #expect(!text.contains(value), "\(what) appears in \(view):\n\(text)")
            }
        }
        try await server.shutdown()
    }
}
