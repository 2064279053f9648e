import TransferProtocol

/// What a subscription sends transferctl: an event, or the end of the replay.
enum StreamItem {
    case event(JobEvent)
    case caughtUp(CaughtUp)
}

extension ControlClient {
    /// The next notification of the subscriptions on this connection. The daemon's last word
    /// before it closes the connection (`disconnect`) becomes an error that says why.
    func nextStreamItem() throws -> StreamItem {
        while true {
            let (method, line) = try readNotification()
            switch method {
            case NotificationMethod.event:
                return .event(try params(JobEvent.self, of: line))
            case NotificationMethod.caughtUp:
                return .caughtUp(try params(CaughtUp.self, of: line))
            case NotificationMethod.disconnect:
                let disconnect = try params(Disconnect.self, of: line)
                throw TransferCtlError.connectionBroken("transferd closed the connection: \(disconnect.message)")
            default:
                continue
            }
        }
    }
}
