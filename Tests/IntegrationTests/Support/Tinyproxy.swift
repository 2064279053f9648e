import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real tinyproxy on a loopback port of its own, in the foreground, optionally asking for a
/// login (`BasicAuth`).
final class Tinyproxy: @unchecked Sendable {
    // @unchecked: every property is set in init and only read afterwards.
    let port: Int
    let logFile: String
    private let peer: PeerProcess

    init(in parent: String, login: (user: String, password: String)? = nil) async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tinyproxy") else {
            throw DeadlineExceeded(description: "/usr/bin/tinyproxy is missing: apt-get install tinyproxy (make test installs it)")
        }
        let directory = parent + "/tinyproxy"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try freePort()
        logFile = directory + "/tinyproxy.log"
        var configuration = """
            Port \(port)
            Listen 127.0.0.1
            Timeout 60
            MaxClients 50
            Allow 127.0.0.1
            LogLevel Info
            LogFile "\(logFile)"

            """
        if let login { configuration += "BasicAuth \(login.user) \(login.password)\n" }
        try configuration.write(toFile: directory + "/tinyproxy.conf", atomically: true, encoding: .utf8)
        FileManager.default.createFile(atPath: logFile, contents: nil)
        chmod(logFile, 0o666)
        let logFile = logFile
        peer = try await PeerProcess(
            "tinyproxy", "/usr/bin/tinyproxy", ["-d", "-c", directory + "/tinyproxy.conf"], ports: [port], seconds: 20,
            log: { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" })
    }

    var url: String { "http://127.0.0.1:\(port)" }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    func stop() { peer.stop() }
}
