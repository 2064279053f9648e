import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `allowed_hosts`, `denied_hosts` and `local_addresses`: checked at submit, when each attempt
/// starts and on every redirect, with the real daemon.
@Suite("Host rules")
struct HostRulesTests {
    /// The error a submit of `url` gets, or nil when it is accepted.
    private func refusal(of url: String, by daemon: TestDaemon) -> RPCError? {
        do {
            _ = try daemon.submit(url, to: daemon.destination("refused"))
            return nil
        } catch let ControlClientError.rpc(error) {
            return error
        } catch {
            Issue.record("submit of \(url) failed otherwise: \(error)")
            return nil
        }
    }

    @Test func submitRefusesLocalAddressesNamingTheRuleAndTheFix() async throws {
        let daemon = try TestDaemon(configuration: ["local_addresses": "deny"])
        defer { daemon.cleanUp() }
        try await daemon.start()
        for url in [
            "http://127.0.0.1:9/x", "http://localhost:9/x", "http://[::ffff:127.0.0.1]:9/x", "http://127.1:9/x",
            "http://169.254.169.254/latest/meta-data/", "http://[::1]:9/x", "http://0.0.0.0:9/x",
        ] {
            let error = refusal(of: url, by: daemon)
            #expect(error?.code == .hostNotAllowed, "\(url): \(String(describing: error))")
            #expect(error?.data?.name == "host_not_allowed")
            #expect(error?.message.contains("local_addresses") == true && error?.message.contains(daemon.configPath) == true, "\(String(describing: error))")
        }
        #expect(try daemon.jobs().isEmpty)
    }

    @Test(arguments: [false, true])
    func autoDeniesLocalAddressesOnlyForTheSystemService(system: Bool) async throws {
        let daemon = try TestDaemon(configuration: ["local_addresses": "auto"])
        defer { daemon.cleanUp() }
        // A daemon started by hand is its user's own, root's included; --system makes the system service.
        try await daemon.start(arguments: system ? ["--system"] : [])
        let error = refusal(of: "http://127.0.0.1:9/x", by: daemon)
        #expect((error?.code == .hostNotAllowed) == system, "\(String(describing: error))")
        #expect(daemon.log.contains("local_addresses=\(system ? "deny" : "allow")"), "\(daemon.log)")
        #expect(daemon.log.contains("role=\(system ? "system service" : "user daemon")"), "\(daemon.log)")
    }

    @Test func onlyAllowedHostsAreFetched() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["allowed_hosts": ["localhost"]])
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 401, size: 100_000)
        server.serve("/allowed", content: content)
        try await daemon.start()
        let error = refusal(of: server.url("/allowed"), by: daemon)
        #expect(error?.code == .hostNotAllowed)
        #expect(error?.message.contains("allowed_hosts") == true, "\(String(describing: error))")
        let job = try daemon.submit("http://localhost:\(server.port)/allowed", to: daemon.destination("allowed"))
        #expect(try await daemon.waitForTerminal(job.id).state == .completed)
        try await server.shutdown()
    }

    @Test func aRedirectToADeniedAddressFailsTheJobWithoutRetrying() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["retry_initial_delay_seconds": 0, "denied_hosts": ["127.0.0.2"]])
        defer { daemon.cleanUp() }
        server.serve("/away", content: TestContent(seed: 402, size: 1000), behaviour: .redirect(to: "http://127.0.0.2:\(server.port)/x"))
        try await daemon.start()
        let job = try daemon.submit(server.url("/away"), to: daemon.destination("away"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .hostNotAllowed, "\(String(describing: finished.error))")
        #expect(finished.error?.message.contains("\"127.0.0.2\" of denied_hosts") == true, "\(String(describing: finished.error))")
        #expect(finished.attempts == 1, "not retried")
        #expect(try daemon.outputFiles().isEmpty)
        try await server.shutdown()
    }

    @Test func aRedirectToANameThatResolvesToADeniedAddressIsRefused() async throws {
        // The server listens on another loopback address, so that only the redirect's target is denied.
        let server = try await TestHTTPServer.start(host: "127.0.0.2")
        let daemon = try TestDaemon(configuration: ["denied_hosts": ["127.0.0.1/32"]])
        defer { daemon.cleanUp() }
        server.serve("/to-localhost", content: TestContent(seed: 403, size: 1000), behaviour: .redirect(to: "http://localhost:\(server.port)/x"))
        try await daemon.start()
        let job = try daemon.submit(server.url("/to-localhost"), to: daemon.destination("to-localhost"))
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .hostNotAllowed, "\(String(describing: finished.error))")
        #expect(finished.error?.message.contains("localhost (which resolves to 127.0.0.1)") == true, "\(String(describing: finished.error))")
        #expect(server.requests(for: "/to-localhost").count == 1)
        try await server.shutdown()
    }

    @Test func anAttemptChecksTheRulesWhenItStartsAndAReloadChangesThem() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 1])
        defer { daemon.cleanUp() }
        server.serve("/blocker", content: TestContent(seed: 404, size: 1 << 20), behaviour: .trickle(bytesPerSecond: 10_000))
        server.serve("/next", content: TestContent(seed: 405, size: 1000))
        try await daemon.start()
        // The only transfer slot is taken, so the second job is accepted now and starts later.
        let blocker = try daemon.submit(server.url("/blocker"), to: daemon.destination("blocker"))
        try await waitUntil("the blocker to run") { try daemon.job(blocker.id).state == .running }
        let next = try daemon.submit("http://localhost:\(server.port)/next", to: daemon.destination("next"))
        #expect(next.state == .queued)

        try daemon.writeConfiguration(["max_concurrent_transfers": 1, "denied_hosts": ["localhost"]])
        daemon.send(SIGHUP)
        try await waitUntil("the reload") { daemon.log.contains("configuration reloaded") }
        #expect(refusal(of: "http://localhost:\(server.port)/next", by: daemon)?.code == .hostNotAllowed, "new submits see the new rules")

        _ = try daemon.client().call(Cancel.self, .init(id: blocker.id))
        let finished = try await daemon.waitForTerminal(next.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .hostNotAllowed, "\(String(describing: finished.error))")
        #expect(finished.error?.message.contains("\"localhost\" of denied_hosts") == true, "\(String(describing: finished.error))")
        #expect(server.requests(for: "/next").isEmpty, "the attempt never connected")
        #expect(try daemon.outputFiles().isEmpty, "no partial file is left")
        try await server.shutdown()
    }
}
