import Foundation

/// Runs curl with `arguments` without blocking a thread while it runs.
func runCurl(_ arguments: [String]) async throws -> (exitCode: Int32, stdout: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    let exitCode: Int32 = try await withCheckedThrowingContinuation { continuation in
        process.terminationHandler = { finished in
            continuation.resume(returning: finished.terminationStatus)
        }
        do {
            try process.run()
        } catch {
            process.terminationHandler = nil
            continuation.resume(throwing: error)
        }
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    return (exitCode, String(decoding: data, as: UTF8.self))
}

/// What one `curl` run gave.
struct CurlResult {
    var exitCode: Int32
    var status: Int
    /// Every header block received, interim responses included (when the run kept them).
    var allHeaders: String = ""
    /// The headers of the last response received.
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}
