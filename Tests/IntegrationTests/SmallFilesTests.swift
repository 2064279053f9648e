import Foundation
import Testing
import TransferProtocol

/// Many small files from a real nginx at once: their landings run side by side and share their
/// directory's syncs, and every one still lands whole, once, with nothing left beside it.
@Suite struct SmallFilesTests {
    @Test func manySmallFilesLandingAtOnceAllLandWhole() async throws {
        let daemon = try TestDaemon(configuration: ["max_concurrent_transfers": 16, "max_connections_per_host": 16])
        let nginx = try await Nginx(in: daemon.directory)
        defer {
            nginx.stop()
            daemon.cleanUp()
        }
        let count = 64
        var bodies: [String: [UInt8]] = [:]
        for index in 0..<count {
            let name = "small-\(index).bin"
            bodies[name] = (0..<(4096 + index)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ index) }
            try nginx.serve(bodies[name] ?? [], at: name)
        }
        try await daemon.start()
        var jobs: [String: String] = [:]
        for name in bodies.keys.sorted() {
            jobs[name] = try daemon.submit(nginx.url(name), to: daemon.destination(name)).id
        }
        for (name, id) in jobs {
            let ended = try await daemon.waitForTerminal(id, seconds: 60)
            #expect(ended.state == .completed, "\(name): \(ended.error?.message ?? "")")
            #expect(try Data(contentsOf: URL(fileURLWithPath: daemon.destination(name))) == Data(bodies[name] ?? []), "\(name)")
        }
        // Only the landed files: no partial file is left beside them.
        let left = try FileManager.default.contentsOfDirectory(atPath: daemon.destination("")).sorted()
        #expect(left == bodies.keys.sorted())
        // Each file was asked for once.
        #expect(nginx.accessLog.filter { $0.contains("/small-") }.count == count)
    }
}
