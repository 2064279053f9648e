import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// What a download leaves besides its file, and how transferd introduces itself to servers.
@Suite("Request footprint")
struct RequestFootprintTests {
    @Test func theDaemonLeavesNoCacheInItsHomeAndSaysWhoItIs() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let home = daemon.directory + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        server.serve("/f", content: TestContent(seed: 3, size: 4096))
        try await daemon.start(environment: ["HOME": home])
        let job = try daemon.submit(server.url("/f"), to: daemon.destination("f"))
        #expect(try await daemon.waitForTerminal(job.id).state == .completed)

        // As the system service, the daemon's home is its state directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty, "no .cache or .local from URLCache and cookie storage")
        let agents = server.requests(for: "/f").map { $0.header("User-Agent") ?? "-" }
        #expect(!agents.isEmpty && agents.allSatisfy { $0 == "transferd/\(transferdVersion)" }, "\(agents)")

        // A job that names its own User-Agent sends that one.
        server.serve("/g", content: TestContent(seed: 4, size: 4096))
        let own = try daemon.submit(server.url("/g"), to: daemon.destination("g"), headers: ["User-Agent": "backup-script/2"])
        #expect(try await daemon.waitForTerminal(own.id).state == .completed)
        #expect(server.requests(for: "/g").map { $0.header("User-Agent") ?? "-" }.allSatisfy { $0 == "backup-script/2" })
    }
}
