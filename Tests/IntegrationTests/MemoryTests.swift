import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

@Suite("Memory")
struct MemoryTests {
    /// The network (loopback) is far faster than this slowed-down disk: without back-pressure
    /// the received chunks would pile up in memory, about the whole file. Over several
    /// connections, each helper stops while chunks pile up, keeping its bytes.
    @Test(arguments: [1, 4])
    func peakMemoryStaysBoundedWhenTheDiskIsSlowerThanTheNetwork(segments: Int) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 20 + UInt64(segments), size: 256 << 20)
        server.serve("/big.bin", content: content)
        try await daemon.start(environment: ["TRANSFERD_TEST_WRITE_DELAY_USEC": "40"])
        let baseline = try #require(daemon.peakRSS())
        var params = Submit.Params(url: server.url("/big.bin"), destination: daemon.destination("big.bin"))
        params.segments = segments
        let job = try daemon.submit(params)
        let finished = try await daemon.waitForTerminal(job.id, seconds: 300)
        let peak = try #require(daemon.peakRSS())
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: daemon.destination("big.bin")) == content.sha256Hex())
        let growth = peak - baseline
        print("segments \(segments), slow disk: peak RSS grew by \(growth >> 20) MiB; \(server.bytesSent(for: "/big.bin")) bytes sent for \(content.size)")
        #expect(growth < 96 << 20, "peak RSS grew by \(growth >> 20) MiB (baseline \(baseline >> 20) MiB, peak \(peak >> 20) MiB) for a 256 MiB body")
        try await server.shutdown()
    }
}
