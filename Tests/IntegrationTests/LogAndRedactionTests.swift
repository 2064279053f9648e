import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What clients and servers send reaches the log escaped, and the credentials of OAuth 2.0,
/// OpenID Connect, JWT and signed-URL schemes never reach `status`, events, the log or hooks.
@Suite("Log lines and secrets")
struct LogAndRedactionTests {
    @Test func aHandOffNameWithControlCharactersIsLoggedEscaped() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        try await daemon.start()
        // A directory (not a regular file) is refused, and the refusal names it in the log.
        let name = daemon.directory + "/evil\ntransferd[1]: FORGED line \u{1B}[31mred\u{1B}[0m"
        try FileManager.default.createDirectory(atPath: name, withIntermediateDirectories: false)
        let run = try await runTransferctl(["upload", "--socket", daemon.socketPath, name, "http://127.0.0.1:9/up"])
        #expect(run.status != 0)
        try await waitUntil("the refusal in the log") { daemon.log.contains("file for an upload refused") }
        let log = daemon.log
        #expect(log.contains("evil\\ntransferd[1]: FORGED line \\u{1B}[31mred\\u{1B}[0m"), "\(log)")
        #expect(!log.contains("\u{1B}"), "no escape character reaches the log")
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("transferd[1]: FORGED") }, "no forged line")
    }

    @Test func oauthJWTAndSignedURLCredentialsAreRedactedEverywhere() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let script = daemon.directory + "/hook.sh"
        try "#!/bin/sh\nenv | grep '^TRANSFER_' > \(daemon.directory)/hook.env\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        try daemon.writeConfiguration(["hooks": ["h": ["session": "s", "command": [script]]]])
        let secrets = [
            "code": "c0de-secret", "jwt": "eyJ.jwt-secret", "id_token": "idt-secret", "client_assertion": "ca-secret",
            "code_verifier": "cv-secret", "X-Goog-Signature": "goog-secret", "SAMLResponse": "saml-secret",
        ]
        let query = secrets.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&") + "&page=2"
        server.serve("/file.bin", content: TestContent(seed: 4, size: 2000))
        server.serve("/start", content: TestContent(seed: 4, size: 2000), behaviour: .redirect(to: "/file.bin?" + query))
        try await daemon.start()
        let id = try daemon.submit(.init(url: server.url("/start?") + query, destination: daemon.destination("f.bin"), id: "secret", session: "s")).id
        let job = try await daemon.waitForTerminal(id)
        #expect(job.state == .completed)
        try await waitUntil("the hook to run") { FileManager.default.fileExists(atPath: daemon.directory + "/hook.env") }

        let status = try await runTransferctl(["status", id, "--json", "--socket", daemon.socketPath])
        let events = try await runTransferctl(["events", "--session", "s", "--json", "--socket", daemon.socketPath])
        let hook = try String(contentsOfFile: daemon.directory + "/hook.env", encoding: .utf8)
        let shown: [(String, String)] = [("status", status.stdout), ("events", events.stdout), ("log", daemon.log), ("hook", hook)]
        for (place, text) in shown {
            #expect(text.contains("page=2"), "\(place): \(text)")
            for (name, secret) in secrets {
                #expect(!text.contains(secret), "\(place) shows \(name): \(text)")
            }
        }
        #expect(status.stdout.contains("final_url"), "\(status.stdout)")
        #expect(hook.contains("code=REDACTED") && hook.contains("jwt=REDACTED"), "\(hook)")
        try await server.shutdown()
    }
}
