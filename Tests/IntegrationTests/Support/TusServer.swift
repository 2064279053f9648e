import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real tus server from PyPI (tuspyserver under uvicorn: Tests/Peers/tus_server.py), on a
/// loopback port of its own. Completed uploads are copied to `done/<filename>`.
final class TusServer: @unchecked Sendable {
    // @unchecked: every property is set in init; `process` is only read afterwards.
    let port: Int
    let done: String
    private let process: Process
    private let logFile: String

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Peers/tus_server.py").standardized.path

    init(in parent: String) async throws {
        let check = try await offTheTestThreads { try runProcess("/usr/bin/env", ["python3", "-c", "import tuspyserver, uvicorn"]) }
        guard check.status == 0 else {
            throw DeadlineExceeded(description: "tuspyserver is missing: pip install tuspyserver uvicorn (make test installs them)")
        }
        let directory = parent + "/tus"
        done = directory + "/done"
        logFile = directory + "/server.log"
        try FileManager.default.createDirectory(atPath: directory + "/files", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: done, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: logFile, contents: nil)
        port = try freePort()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.script, String(port), directory + "/files", done]
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let port = port
        try await waitUntil("the tus server to listen on \(port)", seconds: 30) {
            guard self.process.isRunning else { throw DeadlineExceeded(description: "the tus server exited: \(self.log)") }
            return canConnect(port)
        }
    }

    var url: String { "http://127.0.0.1:\(port)/files/" }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// SIGKILL, as for nginx: a child of the test process may inherit a mask that blocks SIGTERM.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
