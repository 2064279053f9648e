import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Bad input")
struct BadInputTests {
    /// Sends one raw line and returns the decoded error.
    private func error(for line: String, on daemon: TestDaemon) throws -> RPCError {
        let client = try daemon.client()
        try client.sendLine(Array(line.utf8))
        let reply = try client.readLine()
        let response = try WireCoding.decoder().decode(RPCResponse<Job>.self, from: Data(reply))
        // The same connection still answers.
        #expect(try client.call(Version.self, .init()).protocol == transferProtocolVersion)
        return try #require(response.error, "no error for \(line)")
    }

    /// A submit request line with these params.
    private static func submit(_ params: String) -> String {
        #"{"jsonrpc":"2.0","id":1,"method":"submit","params":"# + params + "}"
    }

    /// A file at a destination, to be refused as existing.
    private static func existingFile(in daemon: TestDaemon) -> String {
        let existing = daemon.destination("exists")
        _ = FileManager.default.createFile(atPath: existing, contents: Data("x".utf8))
        return existing
    }

    @Test func eachBadRequestGetsItsErrorAndTheDaemonKeepsServing() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let existing = Self.existingFile(in: daemon)
        let cases: [(String, RPCErrorCode)] = [
            ("{not json", .parseError),
            // An array is a batch: an empty one is one error ([1,2] gets an array of two, see SubmitManyTests).
            ("[]", .invalidRequest),
            ("42", .invalidRequest),
            (#"{"jsonrpc":"1.0","id":1,"method":"version"}"#, .invalidRequest),
            (#"{"jsonrpc":"2.0","id":1,"method":"launch"}"#, .methodNotFound),
            (#"{"jsonrpc":"2.0","id":1,"method":"submit"}"#, .invalidParams),
            (Self.submit(#"{"url":"http://127.0.0.1:1/x","overwrite":true}"#), .invalidParams),
            (Self.submit(#"{"url":42,"destination":"/tmp/x"}"#), .invalidParams),
            (Self.submit(#"{"url":"ftp://example.com/x","destination":"/tmp/x"}"#), .unsupportedURL),
            (Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"relative/x"}"#), .invalidDestination),
            (Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"/no/such/dir/x"}"#), .invalidDestination),
            (Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"\#(existing)"}"#), .destinationExists),
            (Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"/tmp/x","headers":{"X":"a\r\nB: c"}}"#), .invalidHeader),
            (#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"id":"nope"}}"#, .noSuchJob),
            // Nested far past the limit: refused by the depth scan before the JSON parser runs.
            (#"{"jsonrpc":"2.0","id":1,"method":"status","params":{"states":"# + String(repeating: "[", count: 100_000) + "}}", .requestTooDeep),
        ]
        for (line, code) in cases {
            let error = try error(for: line, on: daemon)
            #expect(error.code == code, "\(line): \(error.message)")
            #expect(!error.message.isEmpty)
        }
        #expect(try daemon.jobs().isEmpty, "no bad request created a job")
    }

    /// The core's refusals reach the wire word for word, with the flag a transferctl user would
    /// type where the message names a parameter.
    @Test func refusalsOfTheCoreKeepTheirAnswerLines() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let existing = Self.existingFile(in: daemon)
        let answer = { (code: Int, name: String, message: String) in
            #"{"error":{"code":\#(code),"data":{"name":"\#(name)"},"message":"\#(message)"},"id":1,"jsonrpc":"2.0"}"#
        }
        let cases: [(String, String)] = [
            (
                Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"\#(existing)"}"#),
                answer(1003, "destination_exists", "destination \(existing) already exists: remove it, or submit with overwrite (transferctl submit --overwrite) to replace it")
            ),
            (
                #"{"jsonrpc":"2.0","id":1,"method":"status","params":{"id":"nope"}}"#,
                answer(1004, "no_such_job", "no such job: nope (see transferctl status for your jobs)")
            ),
            (
                Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"\#(daemon.destination("a"))","sha256":"xyz"}"#),
                answer(-32602, "invalid_params", "sha256 'xyz' is not a SHA-256: give 64 hexadecimal digits, as printed by sha256sum")
            ),
            (
                Self.submit(#"{"url":"http://127.0.0.1:1/x","destination":"\#(daemon.destination("a"))","size":2305843009213693952}"#),
                answer(-32602, "invalid_params", "size is 2305843009213693952: give 0 to 1152921504606846976 bytes")
            ),
            (
                Self.submit(#"{"url":"gopher://127.0.0.1/x","destination":"\#(daemon.destination("a"))"}"#),
                answer(1001, "unsupported_url", "the URL scheme 'gopher' is not supported: transferd fetches only http:// and https:// URLs")
            ),
        ]
        let client = try daemon.client()
        for (line, expected) in cases {
            try client.sendLine(Array(line.utf8))
            #expect(String(decoding: try client.readLine(), as: UTF8.self) == expected, "\(line)")
        }
    }

    @Test func aRequestLineOverOneMiBIsRefusedAndTheConnectionGoesOn() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let huge = #"{"jsonrpc":"2.0","id":1,"method":"status","params":{"id":""# + String(repeating: "a", count: (1 << 20) + 10) + #""}}"#
        let error = try error(for: huge, on: daemon)
        #expect(error.code == .requestTooLarge)
    }

    @Test func garbageAndAbruptDisconnectsDoNotDisturbOtherClients() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let steady = try daemon.client()
        for index in 0..<20 {
            let client = try daemon.client()
            var noise = [UInt8](repeating: 0, count: 4096)
            for position in noise.indices { noise[position] = UInt8(truncatingIfNeeded: position &* 31 &+ index) }
            try? client.sendLine(noise)
            // Dropped without reading the answer.
        }
        #expect(try steady.call(Version.self, .init()).daemon == transferdVersion)
    }

    @Test func aSecondDaemonOnTheSameSocketRefusesToStartAndAStaleSocketIsReplaced() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        let second = Process()
        second.executableURL = URL(fileURLWithPath: Binaries.transferd)
        second.arguments = ["--socket", daemon.socketPath, "--state-dir", daemon.directory + "/state2", "--config", daemon.configPath]
        let errors = Pipe()
        second.standardError = errors
        try second.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        second.waitUntilExit()
        #expect(second.terminationStatus != 0)
        #expect(message.contains("already listening"), "\(message)")

        daemon.kill9()
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath), "kill -9 leaves a stale socket")
        try await daemon.start()
        var info = stat()
        #expect(stat(daemon.socketPath, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o660)
    }
}
