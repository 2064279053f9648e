import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The small-files row's floor: the same downloads through one bare `URLSession`, as a program
/// would make them without the daemon (no journal, no socket, no events). With `durable`, each
/// file lands as durability rule 5 has it, alone: written to a partial file, synced, renamed,
/// and its directory synced. Without, the bytes are only written, as curl does.
///
/// What the daemon adds on top of this is its own cost; what this costs above curl is
/// FoundationNetworking's, which every transfer goes through.
final class URLSessionFloor: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Entry {
        var url: URL
        var name: String
    }

    private let entries: [Entry]
    private let directory: String
    private let durable: Bool
    private let lock = NSLock()
    private var descriptors: [Int: (descriptor: Int32, index: Int)] = [:]
    private var next = 0
    private var remaining: Int
    private var failure: String?
    private let finished = DispatchSemaphore(value: 0)
    private var session: URLSession?

    /// Reads an aria2c input list (a URL, then an indented `out=NAME` line).
    init(list: String, directory: String, durable: Bool) throws {
        var entries: [Entry] = []
        for line in try String(contentsOfFile: list, encoding: .utf8).split(separator: "\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t") {
                let option = line.trimmingCharacters(in: .whitespaces)
                if option.hasPrefix("out="), !entries.isEmpty { entries[entries.count - 1].name = String(option.dropFirst(4)) }
            } else if let url = URL(string: String(line)) {
                entries.append(Entry(url: url, name: url.lastPathComponent))
            }
        }
        self.entries = entries
        self.directory = directory
        self.durable = durable
        remaining = entries.count
    }

    /// Downloads every entry, `parallel` at a time; returns nil, or what went wrong.
    func run(parallel: Int) -> String? {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = parallel
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        guard remaining > 0 else { return nil }
        for _ in 0..<min(parallel, entries.count) { startNext() }
        finished.wait()
        session?.invalidateAndCancel()
        return lock.withLock { failure }
    }

    private func startNext() {
        let index: Int? = lock.withLock {
            guard next < entries.count else { return nil }
            defer { next += 1 }
            return next
        }
        guard let index, let session else { return }
        let task = session.dataTask(with: entries[index].url)
        let path = partialPath(index)
        let descriptor = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o644)
        lock.withLock {
            if descriptor < 0 { failure = failure ?? "cannot create \(path): \(String(cString: strerror(errno)))" }
            descriptors[task.taskIdentifier] = (descriptor, index)
        }
        task.resume()
    }

    private func partialPath(_ index: Int) -> String {
        durable ? "\(directory)/.\(entries[index].name).part" : "\(directory)/\(entries[index].name)"
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let descriptor = lock.withLock({ descriptors[dataTask.taskIdentifier]?.descriptor }), descriptor >= 0 else { return }
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let entry = lock.withLock { descriptors.removeValue(forKey: task.taskIdentifier) }
        var problem: String?
        if let error {
            problem = "\(task.originalRequest?.url?.absoluteString ?? "?"): \(error)"
        } else if let status = (task.response as? HTTPURLResponse)?.statusCode, status != 200 {
            problem = "\(task.originalRequest?.url?.absoluteString ?? "?"): HTTP \(status)"
        }
        if let entry, entry.descriptor >= 0 {
            if durable, problem == nil {
                problem = land(entry.descriptor, entry.index)
            }
            close(entry.descriptor)
        }
        let done = lock.withLock {
            if let problem, failure == nil { failure = problem }
            remaining -= 1
            return remaining == 0
        }
        if done { finished.signal() } else { startNext() }
    }

    /// Durability rule 5 for one file, with nothing shared: sync, rename, sync the directory.
    private func land(_ descriptor: Int32, _ index: Int) -> String? {
        let final = "\(directory)/\(entries[index].name)"
        guard fsync(descriptor) == 0, rename(partialPath(index), final) == 0 else {
            return "cannot land \(final): \(String(cString: strerror(errno)))"
        }
        let parent = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if parent >= 0 { close(parent) } }
        guard parent >= 0, fsync(parent) == 0 else { return "cannot sync \(directory): \(String(cString: strerror(errno)))" }
        return nil
    }
}

/// `urlsession-fetch LIST DEST_DIR PARALLEL durable|plain`: prints "seconds cpu_seconds".
func urlSessionFetch(list: String, directory: String, parallel: Int, durable: Bool) {
    let floor: URLSessionFloor
    do {
        floor = try URLSessionFloor(list: list, directory: directory, durable: durable)
    } catch {
        fail("cannot read \(list): \(error)")
    }
    let start = now()
    if let failure = floor.run(parallel: parallel) { fail(failure) }
    let seconds = now() - start
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    print(String(format: "%.6f %.3f", seconds, cpu))
}
