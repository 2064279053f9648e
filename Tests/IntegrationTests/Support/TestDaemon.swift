import Foundation
import Testing
import TransferProtocol
#if canImport(Glibc)
import Glibc
#endif

/// A real `transferd` process on a temporary socket and state directory.
final class TestDaemon: @unchecked Sendable {
    // @unchecked: used from one test at a time; `process` is replaced only by start/stop calls.
    let directory: String
    let socketPath: String
    let stateDirectory: String
    let configPath: String
    private(set) var process: Process?
    private var environment: [String: String] = [:]
    let logPath: String

    /// Creates the directories and writes `configuration` (JSON keys of config/transferd.json).
    /// Unless it sets `allowed_roots`, downloads may land anywhere in the test's directory.
    init(configuration: [String: Any] = [:], name: String = #function) throws {
        let safe = name.filter { $0.isLetter || $0.isNumber }.prefix(40)
        // Unix socket paths are limited to 107 bytes: stay under /tmp.
        directory = "/tmp/td-\(safe)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory + "/out", withIntermediateDirectories: true)
        socketPath = directory + "/transferd.sock"
        stateDirectory = directory + "/state"
        configPath = directory + "/transferd.json"
        logPath = directory + "/transferd.log"
        try writeConfiguration(configuration)
    }

    /// Writes `configuration`. The tests fetch from 127.0.0.1, which `local_addresses`' default
    /// refuses to a daemon run as root (as CI runs them): unless a test sets the key, it is allowed.
    /// `allowed_roots` is the test's directory unless the test sets them.
    func writeConfiguration(_ configuration: [String: Any]) throws {
        var configuration = configuration
        if configuration["local_addresses"] == nil { configuration["local_addresses"] = "allow" }
        if configuration["allowed_roots"] == nil { configuration["allowed_roots"] = [directory] }
        let data = try JSONSerialization.data(withJSONObject: configuration)
        try data.write(to: URL(fileURLWithPath: configPath))
    }

    /// A path for a download's destination inside the test's directory.
    func destination(_ name: String) -> String { directory + "/out/" + name }

    /// The variables through which systemd talks to a service: a test daemon gets only those its test gives it.
    static let systemdVariables = [
        "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM",
        "RUNTIME_DIRECTORY", "STATE_DIRECTORY",
    ]

    /// The environment a test daemon runs with: this process's, without systemd's variables, plus `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in systemdVariables { environment.removeValue(forKey: key) }
        for (key, value) in extra { environment[key] = value }
        return environment
    }

    /// Starts the daemon (with `arguments` after the test's socket, state and configuration) and,
    /// unless told otherwise, waits until it answers `version`.
    @discardableResult
    func start(
        environment extra: [String: String] = [:], arguments: [String] = [], waitUntilAnswering: Bool = true, withConfigFlag: Bool = true
    ) async throws -> TestDaemon {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Binaries.transferd)
        process.arguments = ["--socket", socketPath, "--state-dir", stateDirectory] + (withConfigFlag ? ["--config", configPath] : []) + arguments
        let environment = Self.environment(extra)
        process.environment = environment
        // One log across restarts, so a test can read what each run added.
        if !FileManager.default.fileExists(atPath: logPath) {
            FileManager.default.createFile(atPath: logPath, contents: nil)
        }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        self.process = process
        guard waitUntilAnswering else { return self }
        try await waitUntil("transferd to answer on \(socketPath)", seconds: 60) {
            guard process.isRunning else {
                throw DeadlineExceeded(description: "transferd exited with \(process.terminationStatus): \(self.log)")
            }
            return (try? ControlClient(socketPath: self.socketPath).call(Version.self, .init())) != nil
        }
        return self
    }

    /// The daemon's stderr so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    /// SIGKILL, and wait for the process to be gone.
    func kill9() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Sends `signal` to the running daemon.
    func send(_ signal: Int32) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signal)
    }

    /// SIGTERM; returns the exit status.
    @discardableResult
    func terminate() -> Int32 {
        guard let process else { return -1 }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Peak resident memory of the running daemon, in bytes (VmHWM).
    func peakRSS() -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
            return digits.map { $0 * 1024 }
        }
        return nil
    }

    func client() throws -> ControlClient { try ControlClient(socketPath: socketPath) }

    func submit(_ url: String, to destination: String, id: String? = nil, overwrite: Bool = false, headers: [String: String]? = nil) throws -> Job {
        try client().call(Submit.self, .init(url: url, destination: destination, headers: headers, overwrite: overwrite, id: id)).job
    }

    func submit(_ params: Submit.Params) throws -> Job {
        try client().call(Submit.self, params).job
    }

    /// Names of the files in the destination directory, sorted.
    func outputFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory + "/out").sorted()
    }

    func job(_ id: String) throws -> Job {
        guard let job = try client().call(Status.self, .init(id: id)).jobs.first else {
            throw DeadlineExceeded(description: "status returned no job for \(id)")
        }
        return job
    }

    func jobs() throws -> [Job] { try client().call(Status.self, .init(limit: Status.maxLimit)).jobs }

    /// Waits for a job to finish and returns it.
    @discardableResult
    func waitForTerminal(_ id: String, seconds: Double = 120) async throws -> Job {
        var last: Job?
        try await waitUntil("job \(id) to finish", seconds: seconds, interval: .milliseconds(50)) {
            last = try job(id)
            return last?.state.isTerminal ?? false
        }
        guard let last else { throw DeadlineExceeded(description: "no job \(id)") }
        return last
    }

    /// Stops the daemon if running and removes the directory.
    func cleanUp() {
        kill9()
        if ProcessInfo.processInfo.environment["KEEP_TEST_DIRS"] == nil { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// SHA-256 of a file, hex.
func sha256Hex(ofFile path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}

/// Runs `transferctl` with `arguments`; returns its exit status, stdout and stderr.
func runTransferctl(_ arguments: [String], environment extra: [String: String] = [:]) async throws -> (status: Int32, stdout: String, stderr: String) {
    try await offTheTestThreads { try runTransferctlBlocking(arguments, environment: extra) }
}

/// Runs blocking work (a process to wait for) on a thread of its own: the tests' cooperative
/// threads, as many as the machine has cores, stay free for the tests that race a clock.
func offTheTestThreads<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

private func runTransferctlBlocking(_ arguments: [String], environment extra: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
    var environment = ProcessInfo.processInfo.environment
    for (key, value) in extra { environment[key] = value }
    let result = try runProcess(Binaries.transferctl, arguments, environment: environment)
    return (result.status, result.stdout, result.stderr)
}
