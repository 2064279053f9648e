import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real server a test starts (nginx, tinyproxy, a tus server, moto), listening on loopback
/// `ports` of its own; `log` says why when it exits before it listens.
final class PeerProcess: @unchecked Sendable {
    // @unchecked: `process` is set in init and only read afterwards.
    private let process: Process

    init(_ name: String, _ executable: String, _ arguments: [String], ports: [Int], output: String? = nil, seconds: Double = 30, log: @escaping @Sendable () -> String = { "" }) async throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let output {
            FileManager.default.createFile(atPath: output, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            process.standardOutput = handle
            process.standardError = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        do {
            try await waitUntil("\(name) to listen on \(ports)", seconds: seconds) {
                guard self.process.isRunning else { throw DeadlineExceeded(description: "\(name) exited: \(log())") }
                return ports.allSatisfy(canConnect)
            }
        } catch {
            stop()
            throw error
        }
    }

    /// SIGKILL: a child of the test process may inherit a signal mask that blocks SIGTERM.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
