import Foundation
import TransferProtocol

/// A raw subscription on its own connection, read line by line as a script would.
// @unchecked: a stream is read from one thread at a time; its client is not shared.
final class EventStream: @unchecked Sendable {
    enum Item: Equatable {
        case event(JobEvent)
        case caughtUp(CaughtUp)
        case disconnect(Disconnect)
    }

    let client: ControlClient
    let subscription: Subscribe.Result

    /// Subscribes with `params`; a read waits at most `timeout` for the next line.
    init(socket: String, _ params: Subscribe.Params, timeout: Duration = .seconds(60)) throws {
        client = try ControlClient(socketPath: socket, timeout: timeout)
        subscription = try client.call(Subscribe.self, params)
    }

    func next() throws -> Item {
        while true {
            let (method, line) = try client.readNotification()
            switch method {
            case NotificationMethod.event: return .event(try client.params(JobEvent.self, of: line))
            case NotificationMethod.caughtUp: return .caughtUp(try client.params(CaughtUp.self, of: line))
            case NotificationMethod.disconnect: return .disconnect(try client.params(Disconnect.self, of: line))
            default: continue
            }
        }
    }

    /// The replayed events, up to and including `caughtUp`.
    func replay() throws -> (events: [JobEvent], caughtUp: CaughtUp) {
        var events: [JobEvent] = []
        while true {
            switch try next() {
            case .event(let event): events.append(event)
            case .caughtUp(let caughtUp): return (events, caughtUp)
            case .disconnect(let disconnect): throw DeadlineExceeded(description: "disconnected during the replay: \(disconnect.message)")
            }
        }
    }
}
