// A background feed downloader: `fetch` hands downloads to transferd and exits at once;
// `collect`, run any time later (after a reboot too), receives what finished meanwhile, moves each
// file into place, and exits once every end has been delivered.
//
//   swift run FeedDownloader fetch https://example.com/a.jpg https://example.com/b.jpg
//   swift run FeedDownloader collect ~/Pictures/feed
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TransferKit

final class Feed: TransferSessionDelegate {
    let folder: URL
    let done = DispatchSemaphore(value: 0)
    private let failures = Mutex(0)

    init(folder: URL) {
        self.folder = folder
    }

    var failed: Int { failures.withLock { $0 } }

    func transferSession(_ session: TransferSession, downloadTask: TransferDownloadTask, didFinishDownloadingTo location: URL) {
        // The file must be moved before this method returns: it is deleted afterwards.
        let name = downloadTask.taskDescription ?? downloadTask.originalRequest?.url?.lastPathComponent ?? "download"
        let target = folder.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: target)
        do {
            try FileManager.default.moveItem(at: location, to: target)
            print("saved \(target.path)")
        } catch {
            print("cannot save \(target.path): \(error.localizedDescription)")
        }
    }

    func transferSession(_ session: TransferSession, task: TransferTask, didCompleteWithError error: (any Error)?) {
        guard let error else { return }
        failures.withLock { $0 += 1 }
        print("\(task.taskDescription ?? task.jobID) failed: \(error)")
    }

    func transferSessionDidFinishEvents(forBackgroundSession session: TransferSession) {
        done.signal()
    }
}

let identifier = ProcessInfo.processInfo.environment["FEED_SESSION"] ?? "com.example.feed"
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "fetch" where arguments.count > 1:
    let session = TransferSession(configuration: .background(withIdentifier: identifier), delegate: nil, delegateQueue: nil)
    let group = DispatchGroup()
    for text in arguments.dropFirst() {
        guard let url = URL(string: text) else {
            print("not a URL: \(text)")
            exit(2)
        }
        let task = session.downloadTask(with: url)
        task.taskDescription = url.lastPathComponent
        task.resume()
        // Wait until the daemon has the task (it is durable then), not until it is done.
        group.enter()
        DispatchQueue.global().async {
            while task.job == nil, task.error == nil { Thread.sleep(forTimeInterval: 0.01) }
            print(task.error.map { "\(text): \($0)" } ?? "queued \(text) as \(task.jobID)")
            group.leave()
        }
    }
    group.wait()
    session.finishTasksAndInvalidate()
case "collect" where arguments.count == 2:
    let folder = URL(fileURLWithPath: arguments[1])
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let feed = Feed(folder: folder)
    let session = TransferSession(configuration: .background(withIdentifier: identifier), delegate: feed, delegateQueue: nil)
    feed.done.wait()
    let running = await session.allTasks
    print("\(running.count) still running")
    session.finishTasksAndInvalidate()
    exit(feed.failed == 0 ? 0 : 1)
default:
    print("usage: FeedDownloader fetch URL... | FeedDownloader collect FOLDER")
    exit(2)
}
