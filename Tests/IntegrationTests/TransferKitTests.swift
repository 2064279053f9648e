import Foundation
import Synchronization
import Testing
import TransferKit
import TransferProtocol
import TransferTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// TransferKit against the real daemon: background semantics across processes that exit and die,
/// the async API, progress, and a daemon restarted under a session.
@Suite struct TransferKitTests {
    /// Runs the probe (a program using TransferKit) against `daemon`.
    func probe(_ arguments: [String], daemon: TestDaemon) async throws -> ProcessResult {
        let environment = ["TRANSFERD_SOCKET": daemon.socketPath, "PROBE_DOWNLOADS": daemon.directory + "/out/inbox", "PATH": "/usr/bin:/bin"]
        return try await offTheTestThreads { try runProcess(Binaries.transferkitProbe, arguments, environment: environment) }
    }

    func lines(_ result: ProcessResult) -> [String] { result.stdout.split(separator: "\n").map(String.init) }

    @Test func aRelaunchGetsEveryEndOnceWithDidFinishEventsAfterThem() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let cover = TestContent(seed: 2301, size: 3 << 20)
        let page = TestContent(seed: 2302, size: 200_000)
        server.serve("/cover.jpg", content: cover)
        server.serve("/page.html", content: page)
        try await daemon.start()
        let folder = daemon.directory + "/out/feed"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)

        let submitted = try await probe(
            ["submit", "com.example.feed", server.url("/cover.jpg"), "cover.jpg", server.url("/page.html"), "page.html", server.url("/gone"), "gone"],
            daemon: daemon)
        #expect(submitted.status == 0, "\(submitted.stdout) \(submitted.stderr)")
        #expect(lines(submitted).filter { $0.hasPrefix("queued ") }.count == 3, "\(submitted.stdout)")
        // The submitting process has exited; the daemon finishes the tasks on its own.
        try await waitUntil("the three jobs end") { try daemon.jobs().count == 3 && daemon.jobs().allSatisfy(\.state.isTerminal) }
        // Another process without a delegate hands one more over: it leaves the waiting ends alone.
        let more = try await probe(["submit", "com.example.feed", server.url("/page.html"), "again.html"], daemon: daemon)
        #expect(more.status == 0, "\(more.stderr)")
        try await waitUntil("the fourth job ends") { try daemon.jobs().count == 4 && daemon.jobs().allSatisfy(\.state.isTerminal) }

        let collected = try await probe(["collect", "com.example.feed", folder], daemon: daemon)
        #expect(collected.status == 0, "\(collected.stderr)")
        let seen = lines(collected)
        #expect(seen.contains("finish cover.jpg moved \(cover.size)"), "\(seen)")
        #expect(seen.contains("finish page.html moved \(page.size)"), "\(seen)")
        #expect(seen.filter { $0.hasPrefix("complete cover.jpg ok") }.count == 1)
        #expect(seen.filter { $0.hasPrefix("complete page.html ok") }.count == 1)
        #expect(seen.contains("finish again.html moved \(page.size)"), "ends are kept for a process with a delegate: \(seen)")
        #expect(seen.contains { $0.hasPrefix("complete gone failed/http_status/404") }, "\(seen)")
        let finishedEvents = try #require(seen.firstIndex(of: "events-done"))
        #expect(seen.lastIndex { $0.hasPrefix("complete ") }.map { $0 < finishedEvents } == true, "didFinishEvents comes after every end: \(seen)")
        #expect(seen.last == "tasks 0 ")
        #expect(try sha256Hex(ofFile: folder + "/cover.jpg") == cover.sha256Hex())
        #expect(try sha256Hex(ofFile: folder + "/page.html") == page.sha256Hex())
        let inbox = daemon.stateDirectory + "/inbox/\(getuid())"
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox).isEmpty, "acknowledged ends free the daemon's inbox")

        let again = try await probe(["collect", "com.example.feed", folder], daemon: daemon)
        #expect(lines(again) == ["events-done", "tasks 0 "], "every end was acknowledged once handled: \(again.stdout)")
        try await server.shutdown()
    }

    @Test func aProcessKilledInsideACallbackGetsThatEndAgain() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 2303, size: 500_000)
        server.serve("/a", content: content)
        try await daemon.start()
        let folder = daemon.directory + "/out/feed"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)

        let submitted = try await probe(["submit", "crashy", server.url("/a"), "a.bin"], daemon: daemon)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        try await waitUntil("the job ends") { try daemon.jobs().first?.state == .completed }

        let dying = try await probe(["collect", "crashy", folder, "--die-in-callback"], daemon: daemon)
        #expect(dying.status != 0)
        #expect(lines(dying).first == "dying in a.bin", "\(dying.stdout)")
        let relaunched = try await probe(["collect", "crashy", folder], daemon: daemon)
        #expect(lines(relaunched).first == "finish a.bin moved \(content.size)", "\(relaunched.stdout)")
        #expect(lines(relaunched).contains { $0.hasPrefix("complete a.bin ok") })
        #expect(try sha256Hex(ofFile: folder + "/a.bin") == content.sha256Hex())
        try await server.shutdown()
    }

    @Test(.enabled(if: SecondUser.shared != nil, SecondUser.skipReason))
    func twoUsersOfOneDaemonNeverSeeEachOthersTasks() async throws {
        let server = try await TestHTTPServer.start()
        let (daemon, user) = try await SecondUser.startDaemonServingBoth()
        defer { daemon.cleanUp() }
        server.serve("/mine", content: TestContent(seed: 2307, size: 100_000))
        server.serve("/theirs", content: TestContent(seed: 2308, size: 120_000))
        let theirs = daemon.directory + "/out/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
        chown(theirs, user.uid, user.gid)
        chmod(theirs, 0o700)
        let mine = daemon.directory + "/out/mine"
        try FileManager.default.createDirectory(atPath: mine, withIntermediateDirectories: true)
        func asUser(_ arguments: [String]) async throws -> [String] {
            let command = (["TRANSFERD_SOCKET=\(daemon.socketPath)", "PROBE_DOWNLOADS=\(theirs)/inbox", Binaries.transferkitProbe] + arguments)
                .map { "'\($0)'" }.joined(separator: " ")
            let run = try await user.shell("env " + command)
            #expect(run.status == 0, "\(run.stdout) \(run.stderr)")
            return run.stdout.split(separator: "\n").map(String.init)
        }

        _ = try await asUser(["submit", "shared", server.url("/theirs"), "theirs.bin"])
        let submitted = try await probe(["submit", "shared", server.url("/mine"), "mine.bin"], daemon: daemon)
        #expect(submitted.status == 0, "\(submitted.stderr)")
        try await waitUntil("both jobs end") {
            let jobs = try daemon.client().call(Status.self, .init(all: true)).jobs
            return jobs.count == 2 && jobs.allSatisfy { $0.state == .completed }
        }
        let rootSees = lines(try await probe(["collect", "shared", mine], daemon: daemon))
        #expect(rootSees.filter { $0.hasPrefix("finish ") } == ["finish mine.bin moved 100000"], "\(rootSees)")
        let userSees = try await asUser(["collect", "shared", theirs])
        #expect(userSees.filter { $0.hasPrefix("finish ") } == ["finish theirs.bin moved 120000"], "\(userSees)")
        #expect(try sha256Hex(ofFile: theirs + "/theirs.bin") == TestContent(seed: 2308, size: 120_000).sha256Hex())
        try await server.shutdown()
    }

    @Test func asyncDownloadUploadAndCancellation() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 2304, size: 2 << 20)
        server.serve("/file", content: content)
        server.serve("/slow", content: TestContent(seed: 2305, size: 4 << 20), behaviour: .trickle(bytesPerSecond: 64 << 10))
        server.acceptUploads("/store")
        try await daemon.start()
        var configuration = TransferSessionConfiguration.background(withIdentifier: "async")
        configuration.socketPath = daemon.socketPath
        configuration.downloadDirectory = URL(fileURLWithPath: daemon.directory + "/out/async")
        let session = TransferSession(configuration: configuration, delegate: nil, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        let (location, response) = try await session.download(from: try #require(URL(string: server.url("/file"))))
        #expect(try sha256Hex(ofFile: location.path) == content.sha256Hex())
        #expect((response as? HTTPURLResponse)?.statusCode == 200)

        var request = URLRequest(url: try #require(URL(string: server.url("/store"))))
        request.httpMethod = "POST"
        request.setValue("application/x-test", forHTTPHeaderField: "Content-Type")
        let (body, answer) = try await session.upload(for: request, fromFile: location)
        #expect((answer as? HTTPURLResponse)?.statusCode == 201)
        #expect((answer as? HTTPURLResponse)?.value(forHTTPHeaderField: "Location") == "/store/stored/1")
        #expect(String(decoding: body, as: UTF8.self).contains(content.sha256Hex()), "the server's answer body")
        #expect(server.uploads(for: "/store").last?.header("Content-Type") == "application/x-test")

        let slow = try #require(URL(string: server.url("/slow")))
        let download = Task { try await session.download(from: slow) }
        try await waitUntil("the slow download runs") { try daemon.jobs().contains { $0.url.hasSuffix("/slow") && $0.state == .running } }
        download.cancel()
        do {
            _ = try await download.value
            Issue.record("a cancelled download returned")
        } catch let error as TransferError {
            #expect(error.code == .cancelled)
        }
        try await waitUntil("the daemon's job is cancelled") { try daemon.jobs().first { $0.url.hasSuffix("/slow") }?.state == .cancelled }
        try await server.shutdown()
    }

    @Test func progressAllTasksAndADaemonRestartedUnderTheSession() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let content = TestContent(seed: 2306, size: 600_000)
        // Held after 200 kB until the daemon has been killed: the task is surely running when listed.
        let gate = ServerGate()
        server.serve("/trickle", content: content, behaviour: .all(.trickle(bytesPerSecond: 150_000), .holdAfter(bytes: 200_000, until: gate)))
        try await daemon.start()
        let recorder = Recorder()
        var configuration = TransferSessionConfiguration.background(withIdentifier: "progress")
        configuration.socketPath = daemon.socketPath
        let session = TransferSession(configuration: configuration, delegate: recorder, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let destination = URL(fileURLWithPath: daemon.destination("trickle.bin"))
        let task = session.downloadTask(with: URLRequest(url: try #require(URL(string: server.url("/trickle")))), to: destination)
        task.taskDescription = "trickle"
        task.resume()

        try await waitUntil("progress is reported") { recorder.lines.contains { $0.hasPrefix("progress ") } }
        let running = await session.allTasks
        #expect(running.map(\.taskIdentifier) == [task.taskIdentifier])
        #expect(running.first?.taskDescription == "trickle", "the daemon keeps the description")
        #expect(running.first?.countOfBytesExpectedToReceive == content.size)

        daemon.kill9()
        gate.open()
        try await daemon.start()
        try await waitUntil("the end arrives after the restart", seconds: 120) { recorder.lines.contains { $0.hasPrefix("complete") } }
        #expect(recorder.lines.contains("complete trickle ok"), "\(recorder.lines)")
        #expect(try sha256Hex(ofFile: destination.path) == content.sha256Hex())
        #expect(FileManager.default.fileExists(atPath: destination.path), "a download to a chosen destination stays there")
        let progress = recorder.lines.filter { $0.hasPrefix("progress ") }
        #expect(progress.allSatisfy { $0.hasSuffix("/\(content.size)") }, "\(progress)")
        #expect(task.state == .completed)
        try await server.shutdown()
    }
}

extension TransferKitTests {
    /// The async API against nginx, which nobody here wrote: a download, and a PUT to its WebDAV.
    @Test func asyncDownloadAndUploadAgainstNginx() async throws {
        let daemon = try TestDaemon()
        let nginx = try await Nginx(in: daemon.directory)
        defer { nginx.stop(); daemon.cleanUp() }
        let body = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
        try nginx.serve(body, at: "f.bin")
        try await daemon.start()
        var configuration = TransferSessionConfiguration.background(withIdentifier: "nginx")
        configuration.socketPath = daemon.socketPath
        configuration.downloadDirectory = URL(fileURLWithPath: daemon.directory + "/out/kit")
        let session = TransferSession(configuration: configuration, delegate: nil, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        let (location, response) = try await session.download(from: try #require(URL(string: nginx.url("f.bin"))))
        #expect(FileManager.default.contents(atPath: location.path) == Data(body))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)

        var request = URLRequest(url: try #require(URL(string: nginx.url("dav/up.bin"))))
        request.httpMethod = "PUT"
        let (_, answer) = try await session.upload(for: request, fromFile: location)
        #expect((answer as? HTTPURLResponse)?.statusCode == 201)
        #expect(FileManager.default.contents(atPath: nginx.root + "/dav/up.bin") == Data(body))
    }

    @Test func operationsOnAQueueRunOneTaskEachInDependencyOrder() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.serve("/first", content: TestContent(seed: 2309, size: 300_000), behaviour: .trickle(bytesPerSecond: 600_000))
        server.serve("/second", content: TestContent(seed: 2310, size: 1000))
        try await daemon.start()
        let recorder = Recorder()
        var configuration = TransferSessionConfiguration.background(withIdentifier: "queued")
        configuration.socketPath = daemon.socketPath
        let session = TransferSession(configuration: configuration, delegate: recorder, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        func operation(_ path: String) throws -> TransferOperation {
            let task = session.downloadTask(with: URLRequest(url: try #require(URL(string: server.url(path)))), to: URL(fileURLWithPath: daemon.destination(path)))
            task.taskDescription = path
            return TransferOperation(task: task)
        }
        let first = try operation("/first")
        let second = try operation("/second")
        second.addDependency(first)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperation(second)
        queue.addOperation(first)
        try await waitUntil("both operations finish") { first.isFinished && second.isFinished }
        let ends = recorder.lines.filter { $0.hasPrefix("complete") }
        #expect(ends == ["complete /first ok", "complete /second ok"], "the dependency ran first: \(ends)")
        #expect(first.task.state == .completed && second.task.state == .completed)
        try await server.shutdown()
    }
}

/// A delegate that writes down what it is told.
final class Recorder: TransferSessionDelegate {
    private let recorded = Mutex<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }

    func transferSession(_ session: TransferSession, downloadTask: TransferDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        recorded.withLock { $0.append("progress \(totalBytesWritten)/\(totalBytesExpectedToWrite)") }
    }

    func transferSession(_ session: TransferSession, task: TransferTask, didCompleteWithError error: (any Error)?) {
        recorded.withLock { $0.append("complete \(task.taskDescription ?? "") \(error.map { "\($0)" } ?? "ok")") }
    }
}
