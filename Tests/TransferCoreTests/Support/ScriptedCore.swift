import Foundation
import Logging
import TransferProtocol
@testable import TransferCore

/// A started core on the journal in `directory` (a restart when one was there), its engine
/// scripted, its retries fast: what the scheduling, pause and priority tests drive.
func startedScriptedCore(
    in directory: TemporaryDirectory, slots: Int, perHost: Int = 2, maxAttempts: Int? = nil
) async throws -> (TransferManager, ScriptedEngine) {
    let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    let engine = ScriptedEngine()
    var configuration = CoreConfiguration(maxConcurrentTransfers: slots, allowedRoots: AllowedRoots([directory.path]))
    configuration.maxConnectionsPerHost = perHost
    configuration.diskReserveBytes = 0
    configuration.retry.initialDelay = .milliseconds(5)
    configuration.retry.maxDelay = .milliseconds(20)
    if let maxAttempts { configuration.retry.maxAttempts = maxAttempts }
    let manager = try TransferManager(
        journal: try Journal(directory: directory.path, logger: logger), engine: engine, configuration: configuration, logger: logger)
    Task { await manager.run() }
    await manager.start()
    return (manager, engine)
}
