import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real tus server from PyPI (tuspyserver under uvicorn: Tests/Peers/tus_server.py), on a
/// loopback port of its own. Completed uploads are copied to `done/<filename>`.
final class TusServer: @unchecked Sendable {
    // @unchecked: every property is set in init and only read afterwards.
    let port: Int
    let done: String
    private let peer: PeerProcess
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
        port = try freePort()
        let logFile = logFile
        peer = try await PeerProcess(
            "the tus server", "/usr/bin/env", ["python3", Self.script, String(port), directory + "/files", done], ports: [port],
            output: logFile, log: { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" })
    }

    var url: String { "http://127.0.0.1:\(port)/files/" }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    func stop() { peer.stop() }
}
