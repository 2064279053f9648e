import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A local S3 server (moto's `moto_server`, from PyPI) on a loopback port of its own, with
/// presigned URLs made by boto3 (Tests/Peers/s3.py).
final class S3Server: @unchecked Sendable {
    // @unchecked: every property is set in init and only read afterwards.
    let port: Int
    private let peer: PeerProcess

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Peers/s3.py").standardized.path

    init() async throws {
        let check = try await offTheTestThreads { try runProcess("/usr/bin/env", ["python3", "-c", "import moto.server, boto3"]) }
        guard check.status == 0 else {
            throw DeadlineExceeded(description: "moto's server is missing: pip install 'moto[server]' boto3 (make test installs them)")
        }
        port = try freePort()
        peer = try await PeerProcess(
            "moto", "/usr/bin/env", ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)], ports: [port], seconds: 60)
    }

    var endpoint: String { "http://127.0.0.1:\(port)" }

    /// What s3.py prints for `arguments`.
    func run(_ arguments: [String]) async throws -> String {
        let script = Self.script
        let endpoint = endpoint
        let result = try await offTheTestThreads { try runProcess("/usr/bin/env", ["python3", script, endpoint] + arguments) }
        guard result.status == 0 else { throw DeadlineExceeded(description: "s3.py \(arguments): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() { peer.stop() }
}
