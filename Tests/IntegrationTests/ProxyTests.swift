import Foundation
import Testing
import TransferProtocol

/// Downloads through a real proxy (tinyproxy) given by the configuration keys, not the environment,
/// which a systemd service does not inherit.
@Suite struct ProxyTests {
    private static let body = (0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 5) }

    @Test func httpProxyKeyCarriesTheDownload() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let nginx = try await Nginx(in: daemon.directory)
        defer { nginx.stop() }
        let proxy = try await Tinyproxy(in: daemon.directory)
        defer { proxy.stop() }
        try nginx.serve(Self.body, at: "f.bin")
        try daemon.writeConfiguration(["http_proxy": proxy.url])
        try await daemon.start()
        let job = try daemon.submit(nginx.url("f.bin"), to: daemon.destination("a"))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 30)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")")
        #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.destination("a"))) == Data(Self.body))
        #expect(proxy.log.contains("127.0.0.1:\(nginx.httpPort)"), "the request went through the proxy: \(proxy.log)")

        // no_proxy, on reload: the next download goes straight to the server.
        try daemon.writeConfiguration(["http_proxy": proxy.url, "no_proxy": "127.0.0.1"])
        _ = try daemon.client().call(Reload.self, .init())
        let before = proxy.log.components(separatedBy: "Established connection").count
        let direct = try daemon.submit(nginx.url("f.bin"), to: daemon.destination("b"))
        #expect(try await daemon.waitForTerminal(direct.id, seconds: 30).state == .completed)
        #expect(proxy.log.components(separatedBy: "Established connection").count == before, "no_proxy bypassed the proxy")
    }

    @Test func proxyLoginFromTheKeyAndA407WithoutOne() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let nginx = try await Nginx(in: daemon.directory)
        defer { nginx.stop() }
        let proxy = try await Tinyproxy(in: daemon.directory, login: ("proxyuser", "proxysecret"))
        defer { proxy.stop() }
        try nginx.serve(Self.body, at: "f.bin")
        try daemon.writeConfiguration(["http_proxy": "http://proxyuser:proxysecret@127.0.0.1:\(proxy.port)"])
        try await daemon.start()
        let job = try daemon.submit(nginx.url("f.bin"), to: daemon.destination("a"))
        #expect(try await daemon.waitForTerminal(job.id, seconds: 30).state == .completed)

        try daemon.writeConfiguration(["http_proxy": proxy.url, "retry_max_attempts": 20, "retry_initial_delay_seconds": 30])
        _ = try daemon.client().call(Reload.self, .init())
        let refused = try daemon.submit(nginx.url("f.bin"), to: daemon.destination("b"))
        let ended = try await daemon.waitForTerminal(refused.id, seconds: 20)
        #expect(ended.state == .failed)
        #expect(ended.error?.httpStatus == 407)
        #expect(ended.error?.message.contains("https_proxy") == true, "\(ended.error?.message ?? "")")
        #expect(!daemon.log.contains("proxysecret"), "the proxy's password is never logged")
    }
}
