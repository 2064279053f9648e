import Foundation
import Testing
import TransferProtocol

/// The daemon against a real nginx (TLS with a CA the test makes, HTTP/2, `auth_basic`), not the
/// in-repo test server, which agrees with the daemon by construction.
@Suite struct RealServerTests {
    private static let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }

    /// A daemon with retries that would take minutes: a job that ends quickly ended on its first answer.
    private func started(_ name: String = #function) async throws -> (TestDaemon, Nginx) {
        let daemon = try TestDaemon(configuration: ["retry_max_attempts": 20, "retry_initial_delay_seconds": 30], name: name)
        let nginx = try await Nginx(in: daemon.directory)
        try nginx.serve(Self.body, at: "f.bin")
        try nginx.serve(Self.body, at: "private/f.bin")
        try await daemon.start()
        return (daemon, nginx)
    }

    @Test func loginChallengeWithoutCredentialsFailsAtOnce() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        let job = try daemon.submit(nginx.url("private/f.bin"), to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 20)
        #expect(ended.state == .failed)
        #expect(ended.error?.code == .httpStatus)
        #expect(ended.error?.httpStatus == 401)
        #expect(ended.attempts == 1)
        #expect(ended.error?.message.contains("USER:PASSWORD@") == true, "the message says how to give credentials: \(ended.error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: daemon.destination("a")))
    }

    @Test func wrongCredentialsAreTriedOnceThenFail() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        let job = try daemon.submit(nginx.url("private/f.bin", credentials: "user:wrong"), to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 20)
        #expect(ended.state == .failed)
        #expect(ended.error?.httpStatus == 401)
        let asked = nginx.accessLog.filter { $0.contains("/private/f.bin") }
        #expect(asked.count <= 3, "a wrong login is not tried again and again: \(asked)")
        #expect(ended.error.map { !$0.message.contains("wrong") } ?? true, "the password is not in the message")
    }

    @Test func credentialsInTheURLAnswerTheChallenge() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        let job = try daemon.submit(nginx.url("private/f.bin", credentials: "\(Nginx.user):\(Nginx.password)"), to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 30)
        #expect(ended.state == .completed)
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.destination("a"))) == Data(Self.body))
    }

    /// A .tar.gz served with `Content-Encoding: gzip`: saved as sent, byte for byte what curl saves.
    @Test func archiveServedWithContentEncodingIsSavedAsSent() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        try nginx.serve(Self.body, at: "coded/a.tar")
        let gzip = try await offTheTestThreads { try runProcess("/bin/gzip", ["-k", nginx.root + "/coded/a.tar"]) }
        #expect(gzip.status == 0)
        let job = try daemon.submit(nginx.url("coded/a.tar.gz"), to: daemon.destination("a.tar.gz"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 30)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")")
        #expect(ended.contentEncoding == "gzip")
        let curl = try await offTheTestThreads {
            try runProcess("/usr/bin/curl", ["-sS", "-o", daemon.destination("curl.tar.gz"), nginx.url("coded/a.tar.gz")])
        }
        #expect(curl.status == 0)
        let saved = try Data(contentsOf: URL(fileURLWithPath: daemon.destination("a.tar.gz")))
        #expect(saved == (try Data(contentsOf: URL(fileURLWithPath: nginx.root + "/coded/a.tar.gz"))))
        #expect(saved == (try Data(contentsOf: URL(fileURLWithPath: daemon.destination("curl.tar.gz")))))
    }

    /// URLs as written: a percent-encoded path and query reach the server once encoded, directly
    /// and through a relative redirect, whose target the later ranges use without the redirect.
    @Test func urlsAreSentAsWrittenAndRedirectsFollowedOnce() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        let big = (0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }
        try nginx.serve(big, at: "für x.bin")
        let direct = try daemon.submit(nginx.url("f%C3%BCr%20x.bin?b=%2F"), to: daemon.destination("direct"))
        #expect(try await daemon.waitForTerminal(direct.id, seconds: 30).state == .completed)
        let moved = try daemon.submit(nginx.url("moved"), to: daemon.destination("moved"))
        let ended = try await daemon.waitForTerminal(moved.id, seconds: 30)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")")
        #expect(ended.finalUrl == nginx.url("f%C3%BCr%20x.bin?b=%2F"))
        let log = nginx.accessLog
        #expect(log.allSatisfy { !$0.contains("%25") }, "nothing is escaped twice: \(log)")
        #expect(log.filter { $0.contains(" /moved ") }.count == 1, "one redirect for every range: \(log)")
        #expect(log.filter { $0.contains("/f%C3%BCr%20x.bin?b=%2F 206") || $0.contains("/f%C3%BCr%20x.bin?b=%2F 200") }.count >= 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.destination("moved"))) == Data(big))
    }

    @Test func untrustedCertificateFailsAsTLSOnTheFirstAttempt() async throws {
        let (daemon, nginx) = try await started()
        defer { nginx.stop(); daemon.cleanUp() }
        let job = try daemon.submit(nginx.url("f.bin", tls: true), to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 20)
        #expect(ended.state == .failed)
        #expect(ended.error?.code == .tls, "\(ended.error?.message ?? "")")
        #expect(ended.attempts == 1)
        #expect(ended.error?.message.contains("certificate") == true)
    }
}

/// A host name that does not exist fails the job on its first attempt, as curl fails a typo.
@Suite struct UnknownHostTests {
    @Test func unknownHostFailsAsDNSOnTheFirstAttempt() async throws {
        let daemon = try TestDaemon(configuration: ["retry_max_attempts": 20, "retry_initial_delay_seconds": 30])
        defer { daemon.cleanUp() }
        try await daemon.start()
        // A label longer than DNS allows: the resolver answers "unknown" without asking any server.
        let host = String(repeating: "x", count: 64) + ".test"
        let job = try daemon.submit("http://\(host)/file", to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 20)
        #expect(ended.state == .failed)
        #expect(ended.error?.code == .dns)
        #expect(ended.attempts == 1)
        #expect(ended.error?.message.contains("does not exist") == true, "\(ended.error?.message ?? "")")
    }
}
