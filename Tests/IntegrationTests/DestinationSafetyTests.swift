import Foundation
import Testing
import TransferProtocol
import TransferTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A test daemon whose only allowed root is `root/` in its directory, with a sentinel directory and
/// a target file outside it that nothing may ever touch.
private struct Confined {
    let daemon: TestDaemon
    var root: String { daemon.directory + "/root" }
    var sentinel: String { daemon.directory + "/sentinel" }
    var target: String { daemon.directory + "/target.txt" }
    static let targetContents = Data("the file outside the root\n".utf8)

    init(configuration: [String: Any] = [:], name: String = #function) throws {
        daemon = try TestDaemon(configuration: configuration, name: name)
        try FileManager.default.createDirectory(atPath: daemon.directory + "/root/out", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: daemon.directory + "/sentinel", withIntermediateDirectories: true)
        try Self.targetContents.write(to: URL(fileURLWithPath: daemon.directory + "/target.txt"))
        var configuration = configuration
        configuration["allowed_roots"] = [daemon.directory + "/root"]
        try daemon.writeConfiguration(configuration)
    }

    /// Nothing was written outside the root: the sentinel directory is empty and the target file
    /// unchanged.
    func expectNothingOutside(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try FileManager.default.contentsOfDirectory(atPath: sentinel).isEmpty, "the sentinel directory stays empty", sourceLocation: sourceLocation)
        #expect(FileManager.default.contents(atPath: target) == Self.targetContents, "the target file is untouched", sourceLocation: sourceLocation)
        var info = stat()
        #expect(lstat(target, &info) == 0 && info.st_nlink == 1, "no name was linked to the target", sourceLocation: sourceLocation)
    }
}

@Suite("Where downloads may land")
struct DestinationSafetyTests {
    @Test func theTraversalCorpusIsRefusedAndNothingIsWrittenOutsideTheRoot() async throws {
        let server = try await TestHTTPServer.start()
        let confined = try Confined()
        let daemon = confined.daemon
        defer { daemon.cleanUp() }
        server.serve("/f", content: TestContent(seed: 801, size: 64 << 10))
        let root = confined.root
        #expect(symlink(confined.sentinel, root + "/linked-dir") == 0)
        #expect(symlink(confined.target, root + "/out/linked-file") == 0)
        #expect(symlink("../../sentinel", root + "/out/relative-link") == 0)
        try await daemon.start()

        let corpus: [(destination: String, overwrite: Bool, says: String)] = [
            (root + "/out/../../target.txt", true, "'..'"),
            (root + "/../sentinel/escaped", false, "'..'"),
            (root + "/./out/dot", false, "'.'"),
            (confined.sentinel + "/outside", false, "outside the allowed roots"),
            (confined.target, true, "outside the allowed roots"),
            (daemon.directory + "/root-sibling/x", false, "outside the allowed roots"),
            (root + "/linked-dir/through-a-link", false, "symbolic link"),
            (root + "/out/relative-link/x", false, "symbolic link"),
            (root + "/out/linked-file", true, "symbolic link"),
            (root + "/out/linked-file", false, "symbolic link"),
            (root + "/out/nul\u{0}byte", false, "NUL"),
            (root + "/out/" + String(repeating: "n", count: 4096), false, "PATH_MAX"),
            (root + "/out/" + String(repeating: "n", count: 256), false, "NAME_MAX"),
            ("out/relative", false, "absolute"),
            (root, false, "add the file name"),
        ]
        for entry in corpus {
            do {
                _ = try daemon.submit(.init(url: server.url("/f"), destination: entry.destination, overwrite: entry.overwrite))
                Issue.record("\(entry.destination.prefix(120)) was accepted")
            } catch ControlClientError.rpc(let error) {
                #expect(error.code == .invalidDestination, "\(entry.destination.prefix(120)): \(error.message)")
                #expect(error.message.contains(entry.says), "\(entry.destination.prefix(120)): \(error.message)")
            }
        }
        let outside = try #require(
            {
                do {
                    _ = try daemon.submit(server.url("/f"), to: confined.sentinel + "/x")
                    return nil
                } catch ControlClientError.rpc(let error) {
                    return error.message
                }
            }() as String?)
        #expect(outside.contains("add its directory to allowed_roots in \(daemon.configPath)"), "\(outside)")
        #expect(try daemon.jobs().isEmpty, "no refused request made a job")
        #expect(server.requests(for: "/f").isEmpty, "nothing was fetched")
        try confined.expectNothingOutside()
        #expect(try FileManager.default.contentsOfDirectory(atPath: root + "/out").sorted() == ["linked-file", "relative-link"])
        try await server.shutdown()
    }

    @Test func aDownloadInsideTheRootLandsAndServerNamesAreNotUsed() async throws {
        let server = try await TestHTTPServer.start()
        let confined = try Confined()
        let daemon = confined.daemon
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 802, size: 300 << 10)
        server.serve("/start", content: content, behaviour: .redirect(to: "/sentinel/evil.bin"))
        server.serve("/sentinel/evil.bin", content: content)
        try await daemon.start()
        // Neither the URL nor where it redirects names anything on disk: only the destination does.
        let job = try daemon.submit(server.url("/start"), to: confined.root + "/out/plain.bin")
        #expect(try await daemon.waitForTerminal(job.id).state == .completed)
        #expect(try sha256Hex(ofFile: confined.root + "/out/plain.bin") == content.sha256Hex())
        try confined.expectNothingOutside()
        try await server.shutdown()
    }

    @Test func aLinkSwappedInForTheDirectoryWhileATransferRunsCannotRedirectIt() async throws {
        let server = try await TestHTTPServer.start()
        let confined = try Confined()
        let daemon = confined.daemon
        defer { daemon.cleanUp() }
        // The server trickles the first 256 KiB, then holds the rest until the link is in place.
        let gate = ServerGate()
        let content = TestContent(seed: 803, size: 1 << 20)
        server.serve("/held", content: content, behaviour: .all(.trickle(bytesPerSecond: 1 << 20), .holdAfter(bytes: 256 << 10, until: gate)))
        let directory = confined.root + "/out/dir"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try await daemon.start()
        let job = try daemon.submit(server.url("/held"), to: directory + "/file.bin")
        try await waitUntil("the first bytes to be written") { try daemon.job(job.id).bytesReceived >= 256 << 10 }
        #expect(rename(directory, directory + ".moved") == 0)
        #expect(symlink(confined.sentinel, directory) == 0)
        gate.open()
        let finished = try await daemon.waitForTerminal(job.id)
        // The transfer kept the directory it opened: the file is there, under its new name.
        #expect(finished.state == .completed, "\(String(describing: finished.error))")
        #expect(try sha256Hex(ofFile: directory + ".moved/file.bin") == content.sha256Hex())
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory + ".moved") == ["file.bin"], "no partial file left")
        try confined.expectNothingOutside()
        try await server.shutdown()
    }

    @Test func aRetryAfterALinkWasSwappedInFailsWithoutWritingOutside() async throws {
        let server = try await TestHTTPServer.start()
        let confined = try Confined(configuration: ["retry_initial_delay_seconds": 0, "retry_max_delay_seconds": 1])
        let daemon = confined.daemon
        defer { daemon.cleanUp() }
        // 256 KiB, then the server holds until the link is in place, then drops the connection.
        let gate = ServerGate()
        let content = TestContent(seed: 804, size: 1 << 20)
        server.serve("/drops", content: content, behaviour: .all(.holdAfter(bytes: 256 << 10, until: gate), .dropAfter(bytes: 256 << 10)))
        let directory = confined.root + "/out/dir"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try await daemon.start()
        let job = try daemon.submit(server.url("/drops"), to: directory + "/file.bin")
        try await waitUntil("the first bytes to be written") { try daemon.job(job.id).bytesReceived >= 256 << 10 }
        #expect(rename(directory, directory + ".moved") == 0)
        #expect(symlink(confined.sentinel, directory) == 0)
        gate.open()
        // The next attempt walks the path again, meets the link, and stops there.
        let finished = try await daemon.waitForTerminal(job.id)
        #expect(finished.state == .failed)
        #expect(finished.error?.code == .disk, "\(String(describing: finished.error))")
        #expect(finished.error?.message.contains("\(directory) is a symbolic link") == true, "\(String(describing: finished.error))")
        #expect(finished.attempts == 2)
        try confined.expectNothingOutside()
        try await server.shutdown()
    }

    @Test func rootsFromTheEnvironmentAreSeparatedByColonsAndWinOverTheFile() async throws {
        let confined = try Confined()
        let daemon = confined.daemon
        defer { daemon.cleanUp() }
        let first = daemon.directory + "/first"
        let second = daemon.directory + "/second"
        for directory in [first, second] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try await daemon.start(environment: ["TRANSFERD_ALLOWED_ROOTS": "\(first),\(second)"])
        for accepted in [first + "/a", second + "/b"] {
            let job = try daemon.submit("http://127.0.0.1:9/x", to: accepted)
            _ = try? daemon.client().call(Cancel.self, .init(id: job.id))
        }
        do {
            _ = try daemon.submit("http://127.0.0.1:9/x", to: confined.root + "/out/c")
            Issue.record("the file's root was used although the environment replaces it")
        } catch ControlClientError.rpc(let error) {
            #expect(error.message.contains("(\(first), \(second))") && error.message.contains("TRANSFERD_ALLOWED_ROOTS"), "\(error.message)")
        }
    }

    @Test func aRootRemovedOnReloadStopsQueuedJobsFromStartingThere() async throws {
        let server = try await TestHTTPServer.start()
        let confined = try Confined(configuration: ["max_concurrent_transfers": 1])
        let daemon = confined.daemon
        defer { daemon.cleanUp() }
        // The first job holds the only slot until it is cancelled.
        server.serve("/slow", content: TestContent(seed: 805, size: 8 << 20), behaviour: .trickle(bytesPerSecond: 64 << 10))
        server.serve("/queued", content: TestContent(seed: 806, size: 1024))
        try FileManager.default.createDirectory(atPath: daemon.directory + "/other", withIntermediateDirectories: true)
        try daemon.writeConfiguration(["max_concurrent_transfers": 1, "allowed_roots": [confined.root, daemon.directory + "/other"]])
        try await daemon.start()
        let running = try daemon.submit(server.url("/slow"), to: confined.root + "/out/running.bin")
        let queued = try daemon.submit(server.url("/queued"), to: daemon.directory + "/other/queued.bin")
        #expect(try daemon.job(queued.id).state == .queued)
        try daemon.writeConfiguration(["max_concurrent_transfers": 1, "allowed_roots": [confined.root]])
        daemon.send(SIGHUP)
        try await waitUntil("the reload") { daemon.log.contains("configuration reloaded") }
        _ = try daemon.client().call(Cancel.self, .init(id: running.id))
        let refused = try await daemon.waitForTerminal(queued.id)
        #expect(refused.state == .failed)
        #expect(refused.error?.code == .disk)
        #expect(refused.error?.message.contains("outside the allowed roots") == true, "\(String(describing: refused.error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/other").isEmpty)
        try await server.shutdown()
    }
}
