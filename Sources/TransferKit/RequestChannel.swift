import Foundation
import Synchronization
import TransferProtocol

/// The session's connection for requests: one at a time, connected on first use and again after
/// the daemon restarts (requests carry the job ids the library chose, so one sent twice is
/// answered with the same job).
final class RequestChannel: Sendable {
    let socketPath: String
    private let client = Mutex<ControlClient?>(nil)
    /// How long a call waits for the daemon to come back before it fails.
    static let reconnectSeconds: Double = 15

    init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// Calls `method`, reconnecting while the daemon is away for up to `reconnectSeconds`.
    func call<M: RPCMethod>(_ method: M.Type, _ params: M.Params) throws(TransferError) -> M.Result {
        let deadline = Date().addingTimeInterval(Self.reconnectSeconds)
        var pause = 0.05
        while true {
            let outcome: Result<M.Result, ControlClientError> = client.withLock { client in
                do throws(ControlClientError) {
                    let connected: ControlClient
                    if let client {
                        connected = client
                    } else {
                        connected = try ControlClient(socketPath: socketPath, timeout: .seconds(120))
                    }
                    client = connected
                    return .success(try connected.call(method, params))
                } catch {
                    client = nil
                    return .failure(error)
                }
            }
            switch outcome {
            case .success(let result):
                return result
            case .failure(.rpc(let refusal)):
                throw TransferError(code: .refused, message: refusal.message)
            case .failure(let error):
                guard Date() < deadline else { throw TransferError(error) }
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 1)
            }
        }
    }

    /// Drops the connection (the session is invalidated).
    func close() {
        client.withLock { client in
            client?.shutdown()
            client = nil
        }
    }
}
