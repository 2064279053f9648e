// A program that uses TransferKit as an application would, for the integration tests: it is
// started, exits, dies and is started again while the daemon goes on.
//
//   transferkit-probe submit IDENTIFIER URL NAME [URL NAME ...]   hand downloads over, exit once durable
//   transferkit-probe collect IDENTIFIER FOLDER [--die-in-callback]   print every callback, one per line
//
// TRANSFERD_SOCKET names the daemon; PROBE_DOWNLOADS the session's download directory.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TransferKit
#if canImport(Glibc)
import Glibc
#endif

final class Printer: TransferSessionDelegate {
    let folder: URL
    let dieInCallback: Bool
    let done = DispatchSemaphore(value: 0)

    init(folder: URL, dieInCallback: Bool) {
        self.folder = folder
        self.dieInCallback = dieInCallback
    }

    func say(_ line: String) {
        print(line)
        fflush(nil)
    }

    func transferSession(_ session: TransferSession, downloadTask: TransferDownloadTask, didFinishDownloadingTo location: URL) {
        let name = downloadTask.taskDescription ?? "unnamed"
        if dieInCallback {
            say("dying in \(name)")
            abort()
        }
        let target = folder.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: target)
        let moved = (try? FileManager.default.moveItem(at: location, to: target)) != nil
        say("finish \(name) \(moved ? "moved" : "not-moved") \(downloadTask.countOfBytesReceived)")
    }

    func transferSession(_ session: TransferSession, task: TransferTask, didCompleteWithError error: (any Error)?) {
        let outcome = (error as? TransferError).map { "\($0.code)/\($0.jobCode?.rawValue ?? "-")/\($0.httpStatus ?? 0)" } ?? "ok"
        say("complete \(task.taskDescription ?? "unnamed") \(outcome) \(task.taskIdentifier)")
    }

    func transferSessionDidFinishEvents(forBackgroundSession session: TransferSession) {
        say("events-done")
        done.signal()
    }
}

func configuration(_ identifier: String) -> TransferSessionConfiguration {
    var configuration = TransferSessionConfiguration.background(withIdentifier: identifier)
    if let directory = ProcessInfo.processInfo.environment["PROBE_DOWNLOADS"] { configuration.downloadDirectory = URL(fileURLWithPath: directory) }
    return configuration
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "submit" where arguments.count >= 4 && arguments.count % 2 == 0:
    let session = TransferSession(configuration: configuration(arguments[1]), delegate: nil, delegateQueue: nil)
    var tasks: [TransferDownloadTask] = []
    for index in stride(from: 2, to: arguments.count, by: 2) {
        guard let url = URL(string: arguments[index]) else { exit(2) }
        let task = session.downloadTask(with: url)
        task.taskDescription = arguments[index + 1]
        task.resume()
        tasks.append(task)
    }
    // A probe never hangs a test run: it gives up after a minute, saying so.
    let deadline = Date().addingTimeInterval(60)
    for task in tasks {
        while task.job == nil, task.error == nil {
            guard Date() < deadline else {
                print("gave up: the daemon did not answer the submit within 60 s")
                exit(3)
            }
            usleep(5_000)
        }
        print(task.error.map { "refused \($0)" } ?? "queued \(task.taskDescription ?? "") \(task.taskIdentifier)")
    }
    session.finishTasksAndInvalidate()
case "collect" where arguments.count >= 3:
    let printer = Printer(folder: URL(fileURLWithPath: arguments[2]), dieInCallback: arguments.contains("--die-in-callback"))
    let session = TransferSession(configuration: configuration(arguments[1]), delegate: printer, delegateQueue: nil)
    guard printer.done.wait(timeout: .now() + 120) == .success else {
        printer.say("gave up: no didFinishEvents within 120 s")
        exit(3)
    }
    let running = await session.allTasks
    printer.say("tasks \(running.count) \(running.map { "\($0.taskDescription ?? "")=\($0.taskIdentifier)" }.sorted().joined(separator: ","))")
    session.finishTasksAndInvalidate()
default:
    print("usage: transferkit-probe submit IDENTIFIER URL NAME... | collect IDENTIFIER FOLDER [--die-in-callback]")
    exit(2)
}
