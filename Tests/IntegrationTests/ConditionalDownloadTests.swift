import Foundation
import Testing
import TransferProtocol

/// `submit --conditional` against nginx, as a nightly mirror uses it: the first run downloads, a run
/// with nothing new on the server gets `304` and keeps the file, a new version replaces it.
@Suite struct ConditionalDownloadTests {
    @Test func aNightlyJobFetchesTheFileOnlyWhenItChanged() async throws {
        let daemon = try TestDaemon()
        let nginx = try await Nginx(in: daemon.directory)
        defer { nginx.stop(); daemon.cleanUp() }
        let first = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        try nginx.serve(first, at: "mirror.bin")
        try await daemon.start()
        let destination = daemon.destination("mirror.bin")
        func nightly() async throws -> Job {
            let run = try await runTransferctl([
                "submit", "--socket", daemon.socketPath, "--id", "nightly", "--replace", "--conditional", "--wait", "--json",
                nginx.url("mirror.bin"), destination,
            ])
            #expect(run.status == 0, "\(run.stderr)")
            return try WireCoding.decoder().decode(Job.self, from: Data(try #require(run.stdout.split(separator: "\n").last).utf8))
        }
        func accessLog() -> [String] { nginx.accessLog }

        let downloaded = try await nightly()
        #expect(downloaded.state == .completed && downloaded.unchanged == nil)
        #expect(FileManager.default.contents(atPath: destination) == Data(first))
        let served = try FileManager.default.attributesOfItem(atPath: nginx.root + "/mirror.bin")[.modificationDate] as? Date
        let landed = try FileManager.default.attributesOfItem(atPath: destination)[.modificationDate] as? Date
        #expect(served.map { Int($0.timeIntervalSince1970) } == landed.map { Int($0.timeIntervalSince1970) }, "the file keeps the server's Last-Modified")

        let unchanged = try await nightly()
        #expect(unchanged.state == .completed)
        #expect(unchanged.unchanged == true)
        #expect(accessLog().last?.hasSuffix(" 304") == true, "\(accessLog())")
        #expect(FileManager.default.contents(atPath: destination) == Data(first))
        let log = try await runTransferctl(["log", "--socket", daemon.socketPath, "nightly"])
        #expect(log.stdout.contains("unchanged"), "\(log.stdout)")

        // A new version on the server (a later time, another size): fetched and put in place.
        let second = Array(first.prefix(150_000).reversed())
        try nginx.serve(second, at: "mirror.bin")
        let later = Date().addingTimeInterval(120)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: nginx.root + "/mirror.bin")
        let changed = try await nightly()
        #expect(changed.state == .completed && changed.unchanged == nil)
        #expect(accessLog().last?.hasSuffix(" 304") == false, "\(accessLog())")
        #expect(FileManager.default.contents(atPath: destination) == Data(second))
    }
}
