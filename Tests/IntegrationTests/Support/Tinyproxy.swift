import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real tinyproxy on a loopback port of its own, in the foreground, optionally asking for a
/// login (`BasicAuth`).
final class Tinyproxy: @unchecked Sendable {
    // @unchecked: every property is set in init; `process` is only read afterwards.
    let port: Int
    let logFile: String
    private let process: Process

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
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tinyproxy")
        process.arguments = ["-d", "-c", directory + "/tinyproxy.conf"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let port = port
        try await waitUntil("tinyproxy to listen on \(port)", seconds: 20) {
            guard self.process.isRunning else { throw DeadlineExceeded(description: "tinyproxy exited: \(self.log)") }
            return canConnect(port)
        }
    }

    var url: String { "http://127.0.0.1:\(port)" }

    var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// SIGKILL, as for nginx: a child of the test process may inherit a mask that blocks SIGTERM.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
