import NIOHTTP1

/// What the server answers to one request: decided at once under the server's lock, then sent.
struct ResponsePlan {
    var status: HTTPResponseStatus
    var headers: HTTPHeaders
    /// The body to stream (GET only); nil for no body.
    var body: BodyPlan?
    /// Close the connection after the response even if the client wants keep-alive.
    var closeConnection: Bool = false

    /// An answer with an empty body.
    static func empty(_ code: Int, headers extra: [(String, String)] = []) -> ResponsePlan {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: "0")
        for (name, value) in extra {
            headers.add(name: name, value: value)
        }
        return ResponsePlan(status: HTTPResponseStatus(statusCode: code), headers: headers, body: nil)
    }
}

/// The body bytes of one response and how to send them.
struct BodyPlan {
    /// The registered path, for accounting bytes sent.
    let path: String
    let content: TestContent
    /// The bytes of `content` that the headers announce.
    let range: Range<Int64>
    /// Send only this many bytes (fewer than `range.length`), then close the connection.
    let cutAfter: Int64?
    /// Close the connection after the body instead of ending the response (the Content-Length lied).
    let closeAfterBody: Bool
    /// Send slowly, at about this rate.
    let bytesPerSecond: Int?
    /// Where to stop until the gate is open.
    var hold: (point: HoldPoint, gate: ServerGate)? = nil

    /// How many bytes will actually be sent.
    var bytesToSend: Int64 {
        min(range.length, cutAfter ?? range.length)
    }

    /// Whether the connection is closed after the bytes are sent, without ending the response.
    var closesAbruptly: Bool {
        closeAfterBody || bytesToSend < range.length
    }
}
