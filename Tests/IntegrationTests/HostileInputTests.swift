import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What an attacker with access to the socket, or a hostile server, tries: each gets a clean
/// answer or a clean job failure, and the daemon goes on serving everyone else.
@Suite("Hostile input")
struct HostileInputTests {
    /// An answer to a raw request line: its error, or that it has a result.
    private struct Answer: Decodable {
        var error: RPCError?
        var result: Ignored?
        struct Ignored: Decodable {}
    }

    /// Sends `line` on a new connection and returns the decoded answer.
    private func answer(_ line: String, on daemon: TestDaemon) throws -> Answer {
        let client = try daemon.client()
        try client.sendLine(Array(line.utf8))
        return try WireCoding.decoder().decode(Answer.self, from: Data(try client.readLine()))
    }

    @Test func everyNumericParameterAtItsExtremesGetsACleanAnswerAndTheDaemonSurvivesARestart() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let extremes = [
            "0", "-1", "1e-300", "1e16", "1e308", "9223372036854775807", "9223372036854775808", "18446744073709551616",
            "-9223372036854775809", "1e999", "-1e999", "0.5", #""NaN""#, #""Infinity""#, #""1e16""#, "null", "true", "[]", "{}",
        ]
        var counter = 0
        func submit(_ member: String) -> String {
            counter += 1
            return #"{"jsonrpc":"2.0","id":\#(counter),"method":"submit","params":{"url":"http://127.0.0.1:1/x","destination":"\#(daemon.destination("n\(counter)"))",\#(member)}}"#
        }
        let parameters: [(name: String, line: (String) -> String)] = [
            ("size", { submit(#""size":\#($0)"#) }),
            ("retry.max_attempts", { submit(#""retry":{"max_attempts":\#($0)}"#) }),
            ("retry.max_time_seconds", { submit(#""retry":{"max_time_seconds":\#($0)}"#) }),
            ("retry.idle_timeout_seconds", { submit(#""retry":{"idle_timeout_seconds":\#($0)}"#) }),
            ("retry.low_speed_bytes_per_second", { submit(#""retry":{"low_speed_bytes_per_second":\#($0)}"#) }),
            ("retry.low_speed_seconds", { submit(#""retry":{"low_speed_seconds":\#($0)}"#) }),
            ("subscription", { #"{"jsonrpc":"2.0","id":1,"method":"unsubscribe","params":{"subscription":\#($0)}}"# }),
            ("seq", { #"{"jsonrpc":"2.0","id":1,"method":"ack","params":{"session":"s","seq":\#($0)}}"# }),
        ]
        var accepted = 0
        for parameter in parameters {
            for value in extremes {
                let response = try answer(parameter.line(value), on: daemon)
                if let error = response.error {
                    #expect(!error.message.isEmpty)
                    if error.code == .invalidParams, value != "null" {
                        #expect(error.message.contains(parameter.name.split(separator: ".").last ?? ""), "\(parameter.name)=\(value): \(error.message)")
                    }
                } else if response.result != nil, parameter.name != "seq", parameter.name != "subscription" {
                    accepted += 1
                }
            }
        }
        // 0 bytes, a low-speed check off, the largest and smallest fitting values and null (left out) are fine.
        #expect(accepted > 0)
        let before = try daemon.jobs().count
        #expect(before == accepted)
        // The submit that took the service down: any socket user, through the CLI.
        let cli = try await runTransferctl([
            "--socket", daemon.socketPath, "submit", "http://127.0.0.1:1/x", daemon.destination("cli"), "--idle-timeout", "1e16",
        ])
        #expect(cli.status == 4)
        #expect(cli.stderr.contains("retry.idle_timeout_seconds is 1e+16: give 1 to 86400 seconds"), "\(cli.stderr)")
        daemon.kill9()
        try await daemon.start()
        #expect(try daemon.jobs().count == before, "every accepted job is back after a restart, and the daemon serves")
    }

    @Test func aRedirectToAnotherSchemeIsRefusedAndNothingElseIsSpoken() async throws {
        // A listener that records whether anyone came (an FTP client would log in here).
        let ftp = try RawHTTPServer { _ in Array("220 ready\r\n".utf8) }
        defer { ftp.stop() }
        let server = try RawHTTPServer { line in
            let target = line.contains("/to-ftp") ? "ftp://127.0.0.1:\(ftp.port)/x" : "file:///etc/passwd"
            return rawAnswer("302 Found", ["Location: \(target)", "Content-Length: 0"])
        }
        defer { server.stop() }
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        for path in ["to-ftp", "to-file"] {
            let job = try daemon.submit("http://127.0.0.1:\(server.port)/\(path)", to: daemon.destination(path))
            let ended = try await daemon.waitForTerminal(job.id, seconds: 30)
            #expect(ended.state == .failed)
            #expect(ended.error?.code == .redirect)
            #expect(ended.error?.message.contains("speaks only http and https") == true, "\(ended.error?.message ?? "")")
            #expect(ended.attempts == 1, "a refused redirect is not retried")
        }
        #expect(ftp.connections == 0, "nothing connected to the ftp: target")
        #expect(server.connections == 2, "file:///etc/passwd did not become a request to the same server")
        #expect(try daemon.outputFiles().isEmpty)
    }

    @Test func interimAnswersAreSkippedAndConflictingLengthsRefused() async throws {
        let body = Array("the file's bytes\n".utf8)
        let server = try RawHTTPServer { line in
            if line.contains("/interim") {
                return rawAnswer("100 Continue", []) + rawAnswer("103 Early Hints", ["Link: </style.css>; rel=preload"])
                    + rawAnswer("200 OK", ["Content-Length: \(body.count)", "ETag: \"v1\""], body: body)
            }
            if line.contains("/huge-header") {
                return rawAnswer("200 OK", ["X-Padding: " + String(repeating: "a", count: 200_000), "Content-Length: \(body.count)"], body: body)
            }
            return rawAnswer("200 OK", ["Content-Length: \(body.count)", "Content-Length: 5"], body: body)
        }
        defer { server.stop() }
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let interim = try daemon.submit("http://127.0.0.1:\(server.port)/interim", to: daemon.destination("interim"))
        let landed = try await daemon.waitForTerminal(interim.id, seconds: 30)
        #expect(landed.state == .completed, "\(landed.error?.message ?? "")")
        #expect(FileManager.default.contents(atPath: daemon.destination("interim")) == Data(body))

        let conflicting = try daemon.submit("http://127.0.0.1:\(server.port)/lengths", to: daemon.destination("lengths"))
        let refused = try await daemon.waitForTerminal(conflicting.id, seconds: 30)
        #expect(refused.state == .failed)
        #expect(refused.error?.code == .protocolViolation)
        #expect(refused.error?.message.contains("different Content-Length values") == true, "\(refused.error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: daemon.destination("lengths")))

        let huge = try daemon.submit("http://127.0.0.1:\(server.port)/huge-header", to: daemon.destination("huge"))
        let tooLarge = try await daemon.waitForTerminal(huge.id, seconds: 30)
        #expect(tooLarge.state == .failed)
        #expect(tooLarge.error?.message.contains("response headers larger than") == true, "\(tooLarge.error?.message ?? "")")
        #expect(try daemon.client().call(Version.self, .init()).protocol == transferProtocolVersion)
    }

    @Test func anIPv6LiteralURLWorksLikeAHostName() async throws {
        guard let server = try? RawHTTPServer(ipv6: true, answer: { _ in rawAnswer("200 OK", ["Content-Length: 3"], body: Array("v6\n".utf8)) }) else {
            // No ::1 on this machine (IPv6 disabled): nothing to fetch from.
            return
        }
        defer { server.stop() }
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let job = try daemon.submit("http://[::1]:\(server.port)/file", to: daemon.destination("v6"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 30)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")")
        #expect(FileManager.default.contents(atPath: daemon.destination("v6")) == Data("v6\n".utf8))
    }

    @Test func subscribersThatNeverReadAreCutOffByTheByteBoundAndMemoryStaysBounded() async throws {
        let daemon = try TestDaemon(configuration: [
            "subscriber_queue_events": 1_000_000, "subscriber_queue_bytes_per_user": 1 << 20, "max_connections_per_user": 128,
        ])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let baseline = try #require(daemon.peakRSS())
        // Sixty connections subscribe to everything of theirs and never read a byte.
        var silent: [ControlClient] = []
        for _ in 0..<60 {
            // A read that waits 10 s finds a subscriber with nothing more to say.
            let client = try ControlClient(socketPath: daemon.socketPath, timeout: .seconds(10))
            _ = try client.call(Subscribe.self, .init())
            silent.append(client)
        }
        // Every job makes a few events; each is queued sixty times once the sockets are full.
        let submitter = try daemon.client()
        for index in 0..<400 {
            _ = try submitter.call(
                Submit.self,
                .init(url: "http://127.0.0.1:1/x", destination: daemon.destination("j\(index)"), retry: .init(maxAttempts: 1)))
        }
        try await waitUntil("every job to fail", seconds: 120) { try daemon.jobs().allSatisfy { $0.state == .failed } }
        let peak = try #require(daemon.peakRSS())
        #expect(peak - baseline < 96 << 20, "RSS grew by \(peak - baseline) bytes")
        // A cut-off subscriber finds, after the events it was sent, why it was dropped. The first
        // to fill their queues are cut off; the last ones may fit once the others' bytes are freed.
        var reason: Disconnect?
        for client in silent where reason == nil {
            while reason == nil, let (method, line) = try? client.readNotification() {
                if method == NotificationMethod.disconnect { reason = try client.params(Disconnect.self, of: line) }
            }
        }
        #expect(reason?.reason == "slow_subscriber")
        #expect(reason?.message.contains("subscriber_queue_bytes_per_user") == true, "\(reason?.message ?? "no disconnect")")
        #expect(try daemon.client().call(Version.self, .init()).protocol == transferProtocolVersion)
    }

    @Test func idleControlConnectionsAreClosedButSubscribersAreNot() async throws {
        let daemon = try TestDaemon(configuration: ["control_idle_timeout_seconds": 1])
        defer { daemon.cleanUp() }
        try await daemon.start()
        let subscriber = try daemon.client()
        _ = try subscriber.call(Subscribe.self, .init())
        let idle = try daemon.client()
        let (method, line) = try idle.readNotification()
        #expect(method == NotificationMethod.disconnect)
        let disconnect = try idle.params(Disconnect.self, of: line)
        #expect(disconnect.reason == "idle_timeout")
        #expect(disconnect.message.contains("control_idle_timeout_seconds"))
        #expect(throws: (any Error).self) { try idle.readLine() }
        // The subscriber, idle for longer, is still served.
        let job = try daemon.submit("http://127.0.0.1:1/x", to: daemon.destination("x"))
        var seen = false
        while !seen, let (method, line) = try? subscriber.readNotification() {
            if method == NotificationMethod.event { seen = (try subscriber.params(JobEvent.self, of: line)).job.id == job.id }
        }
        #expect(seen)
    }

    @Test(.enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
    func theLastConnectionsAreKeptForRootAndOtherUsersJobsAreNeverNamed() async throws {
        let user = try #require(SecondUser.shared)
        let server = try await TestHTTPServer.start()
        let gate = ServerGate()
        server.serve("/held", content: TestContent(seed: 11, size: 1 << 20), behaviour: .holdAfter(bytes: 64 << 10, until: gate))
        let daemon = try TestDaemon(configuration: ["max_connections": 4, "root_reserved_connections": 2, "allowed_roots": ["/tmp"]])
        defer { daemon.cleanUp() }
        try await daemon.start()
        user.mayConnect(to: daemon)
        chmod(daemon.directory, 0o755)
        chmod(daemon.directory + "/out", 0o777)
        // Root's download, held at the server, writes to a directory both users may write.
        let destination = daemon.destination("shared.bin")
        let rootJob = try daemon.submit(server.url("/held"), to: destination)
        do {
            let held = [try daemon.client(), try daemon.client()]
            // Two of four slots are taken and the last two are kept for root: another user is refused…
            let refused = try await user.transferctl(["--socket", daemon.socketPath, "status"])
            #expect(refused.status == 4)
            #expect(refused.stderr.contains("root_reserved_connections"), "\(refused.stderr)")
            // …and root is not.
            #expect(try daemon.client().call(Version.self, .init()).protocol == transferProtocolVersion)
            withExtendedLifetime(held) {}
        }
        // With the slots free again, the other user submits to the same destination: refused,
        // without learning the id of root's job.
        try await waitUntil("the held connections to close") {
            try await user.transferctl(["--socket", daemon.socketPath, "status"]).status == 0
        }
        let other = try await user.transferctl(["--socket", daemon.socketPath, "submit", server.url("/held"), destination])
        #expect(other.status == 4)
        #expect(other.stderr.contains("another user's job is already downloading"), "\(other.stderr)")
        #expect(!other.stderr.contains(rootJob.id), "\(other.stderr)")
        gate.open()
        #expect(try await daemon.waitForTerminal(rootJob.id).state == .completed)
        try await server.shutdown()
    }
}
