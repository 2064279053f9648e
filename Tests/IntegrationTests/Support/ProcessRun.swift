import Foundation
import Synchronization

/// What a finished command printed and how it ended.
struct ProcessResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `executable` to its end and returns its status and output. Blocks: from async tests, call
/// it through `offTheTestThreads`. Both pipes are read at once, so a chatty stderr cannot stall it.
func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stderr = Mutex(Data())
    let errors = err.fileHandleForReading
    let stderrRead = DispatchSemaphore(value: 0)
    Thread {
        let data = errors.readDataToEndOfFile()
        stderr.withLock { $0 = data }
        stderrRead.signal()
    }.start()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    stderrRead.wait()
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr.withLock { $0 }, as: UTF8.self))
}

/// Runs `executable` for its exit status alone (output discarded); -1 when it cannot start.
func runQuietly(_ executable: String, _ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}
