import Foundation
import Synchronization

/// A command run in the background whose stdout and stderr lines can be waited for as they come.
final class RunningCommand: Sendable {
    private let process: Process
    /// What the command wrote so far, and how many of its two pipes reached their end.
    private final class Output: Sendable {
        let state = Mutex<(stdout: String, stderr: String, ended: Int)>(("", "", 0))

        func append(_ data: Data, toStandardOutput: Bool) {
            state.withLock {
                if toStandardOutput { $0.stdout += String(decoding: data, as: UTF8.self) } else { $0.stderr += String(decoding: data, as: UTF8.self) }
                if data.isEmpty { $0.ended += 1 }
            }
        }
    }

    private let output = Output()

    init(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        self.process = process
        try process.run()
        // A reading thread per pipe (not readabilityHandler, whose end-of-file is not reliable on Linux).
        for (pipe, toStandardOutput) in [(out, true), (err, false)] {
            let handle = pipe.fileHandleForReading
            Thread { [output] in
                while true {
                    let data = handle.availableData
                    output.append(data, toStandardOutput: toStandardOutput)
                    if data.isEmpty { return }
                }
            }.start()
        }
    }

    var stdout: String { output.state.withLock { $0.stdout } }
    var stderr: String { output.state.withLock { $0.stderr } }
    var stdoutLines: [String] { stdout.split(separator: "\n").map(String.init) }
    var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }

    /// Waits for the command to exit and returns its status.
    func exitStatus(seconds: Double = 60) async throws -> Int32 {
        // Both pipes at their end (the command and anything it started are gone), and the process reaped.
        try await waitUntil("the command to exit", seconds: seconds) { !process.isRunning && output.state.withLock { $0.ended == 2 } }
        process.waitUntilExit()
        return process.terminationStatus
    }

    func interrupt() {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
    }

    func kill9() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
