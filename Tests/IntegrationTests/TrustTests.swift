import Foundation
import Testing
import TransferProtocol

/// CA certificates and client certificates against a real nginx whose CA the test makes: a job's
/// own `cacert`, the `ca_file` key (applied on reload), a certificate for another name, and
/// `client_certificates` for a server that asks for one.
@Suite struct TrustTests {
    private static let body = (0..<500_000).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) }

    private func started(_ configuration: (Nginx) -> [String: Any] = { _ in [:] }, name: String = #function) async throws -> (TestDaemon, Nginx) {
        let daemon = try TestDaemon(name: name)
        let nginx = try await Nginx(in: daemon.directory)
        try nginx.serve(Self.body, at: "f.bin")
        var settings = configuration(nginx)
        settings["retry_max_attempts"] = 20
        settings["retry_initial_delay_seconds"] = 30
        try daemon.writeConfiguration(settings)
        try await daemon.start()
        return (daemon, nginx)
    }

    @Test func aJobsOwnCACertificateIsTrustedForItAlone() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        let run = try await runTransferctl(
            ["submit", nginx.url("f.bin", tls: true), daemon.destination("a"), "--cacert", nginx.caFile, "--wait", "--socket", daemon.socketPath])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.destination("a"))) == Data(Self.body))
        // Another job to the same server without it is not trusted.
        let other = try daemon.submit(nginx.url("f.bin", tls: true), to: daemon.destination("b"))
        let ended = try await daemon.waitForTerminal(other.id, seconds: 20)
        #expect(ended.state == .failed && ended.error?.code == .tls)
        #expect(ended.error?.message.contains("--cacert") == true, "the message names the fix: \(ended.error?.message ?? "")")
    }

    @Test func caFileKeyIsTrustedUntilAReloadRemovesIt() async throws {
        let (daemon, nginx) = try await started { ["ca_file": $0.caFile] }
        defer { nginx.stop(); daemon.cleanUp() }
        let job = try daemon.submit(nginx.url("f.bin", tls: true), to: daemon.destination("a"))
        #expect(try await daemon.waitForTerminal(job.id, seconds: 30).state == .completed)

        try daemon.writeConfiguration(["retry_max_attempts": 20, "retry_initial_delay_seconds": 30])
        _ = try daemon.client().call(Reload.self, .init())
        let after = try daemon.submit(nginx.url("f.bin", tls: true), to: daemon.destination("b"))
        let ended = try await daemon.waitForTerminal(after.id, seconds: 20)
        #expect(ended.state == .failed && ended.error?.code == .tls, "\(ended.error?.message ?? "")")
    }

    @Test func aCertificateForAnotherNameFailsAsTLSOnTheFirstAttempt() async throws {
        let (daemon, nginx) = try await started { ["ca_file": $0.caFile] }
        defer { nginx.stop(); daemon.cleanUp() }
        // The certificate names localhost and 127.0.0.1, not 127.0.0.2.
        let job = try daemon.submit("https://127.0.0.2:\(nginx.httpsPort)/f.bin", to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 20)
        #expect(ended.state == .failed && ended.error?.code == .tls, "\(ended.error?.message ?? "")")
        #expect(ended.attempts == 1)
    }

    @Test func clientCertificateConfiguredForTheHostIsPresented() async throws {
        let (daemon, nginx) = try await started {
            ["ca_file": $0.caFile, "client_certificates": ["localhost": ["certificate": $0.clientCertificate, "key": $0.clientKey]]]
        }
        defer { nginx.stop(); daemon.cleanUp() }
        let job = try daemon.submit(nginx.mutualTLSURL("f.bin"), to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 30)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")")

        // Without it, nginx answers 400, and the message says what may be missing.
        try daemon.writeConfiguration(["ca_file": nginx.caFile, "retry_max_attempts": 20, "retry_initial_delay_seconds": 30])
        _ = try daemon.client().call(Reload.self, .init())
        let without = try daemon.submit(nginx.mutualTLSURL("f.bin"), to: daemon.destination("b"))
        let refused = try await daemon.waitForTerminal(without.id, seconds: 20)
        #expect(refused.state == .failed && refused.error?.httpStatus == 400)
        #expect(refused.error?.message.contains("client_certificates") == true, "\(refused.error?.message ?? "")")
    }

    @Test func anUnreadableCAFileStopsAReloadAndKeepsTheTrustThatWas() async throws {
        let (daemon, nginx) = try await started { ["ca_file": $0.caFile] }
        defer { nginx.stop(); daemon.cleanUp() }
        try daemon.writeConfiguration(["ca_file": daemon.directory + "/missing.pem"])
        #expect(throws: (any Error).self) { _ = try daemon.client().call(Reload.self, .init()) }
        let job = try daemon.submit(nginx.url("f.bin", tls: true), to: daemon.destination("a"))
        #expect(try await daemon.waitForTerminal(job.id, seconds: 30).state == .completed)
    }
}
