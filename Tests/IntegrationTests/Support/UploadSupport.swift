import Foundation
import TransferProtocol
import TransferTestSupport

/// Writes `content` to a new file at `path`, 4 MiB at a time.
func writeContent(_ content: TestContent, to path: String) throws {
    FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var offset: Int64 = 0
    let chunk: Int64 = 4 << 20
    while offset < content.size {
        let end = min(offset + chunk, content.size)
        try handle.write(contentsOf: content.bytes(in: offset..<end))
        offset = end
    }
}

extension TestDaemon {
    /// Runs `transferctl upload FILE URL` with `arguments` against this daemon.
    func upload(_ file: String, to url: String, _ arguments: [String] = []) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await runTransferctl(["upload", file, url, "--socket", socketPath] + arguments)
    }

    /// Uploads with `--json` and returns the job it printed (waited for with `wait`).
    func uploadJob(_ file: String, to url: String, _ arguments: [String] = [], wait: Bool = false) async throws -> Job {
        let run = try await upload(file, to: url, ["--json"] + (wait ? ["--wait"] : []) + arguments)
        guard let line = run.stdout.split(separator: "\n").last, let job = try? WireCoding.decoder().decode(Job.self, from: Data(line.utf8)) else {
            throw UploadRunFailed(description: "transferctl upload exited \(run.status): \(run.stdout) \(run.stderr)")
        }
        return job
    }

    /// The files in the upload spool.
    func spoolFiles() -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: stateDirectory + "/spool")) ?? []
    }
}

struct UploadRunFailed: Error, CustomStringConvertible {
    var description: String
}
