import NIOCore
import NIOHTTP1

/// Answers the requests of one connection as ``ServerState`` plans them, streaming bodies one chunk at a
/// time: the next chunk is produced only when the previous write has reached the socket, so memory stays
/// bounded whatever the body size.
final class HTTPRequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let state: ServerState
    private let chunkSize: Int
    private var requestHead: HTTPRequestHead?
    private var active = true
    /// The upload being received, when the request is one.
    private var upload: UploadReceiver?
    /// The resumable-upload request being received, when the request is one.
    private var resumable: ResumableExchange?

    init(state: ServerState, chunkSize: Int) {
        self.state = state
        self.chunkSize = max(1, chunkSize)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if let plan = state.resumable.plan(for: head, fallbackAuthority: Self.authority(of: context.channel)) {
                state.log(head)
                resumable = ResumableExchange(store: state.resumable, plan: plan)
                requestHead = head
                for interim in plan.interim {
                    let status = HTTPResponseStatus(statusCode: interim.status)
                    context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: interim.headers))), promise: nil)
                }
                if !plan.interim.isEmpty { context.flush() }
                return
            }
            if let receiver = state.uploads.begin(head) {
                upload = receiver
                requestHead = head
                return
            }
            requestHead = head
        case .body(let buffer):
            if let resumable, !resumable.receive(buffer) {
                self.resumable = nil
                requestHead = nil
                active = false
                context.close(promise: nil)
            }
            if let upload, !upload.receive(buffer) {
                self.upload = nil
                requestHead = nil
                active = false
                context.close(promise: nil)
            }
        case .end:
            if let resumable, let head = requestHead {
                self.resumable = nil
                requestHead = nil
                // A stalled request is never answered: the client waits until it gives up or goes.
                if !resumable.stalled { answerUpload(resumable.finish(), request: head, context: context) }
                return
            }
            if let upload, let head = requestHead {
                self.upload = nil
                requestHead = nil
                if let answer = upload.finish() { answerUpload(answer, request: head, context: context) }
                return
            }
            guard let head = requestHead else { return }
            requestHead = nil
            respond(to: head, context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        active = false
        // A resumable upload keeps what arrived before the connection went.
        resumable?.abort()
        resumable = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        active = false
        resumable?.abort()
        resumable = nil
        context.close(promise: nil)
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let plan = state.plan(for: request)
        let keepAlive = request.isKeepAlive && !plan.closeConnection
        var head = HTTPResponseHead(version: request.version, status: plan.status, headers: plan.headers)
        if !keepAlive {
            head.headers.replaceOrAdd(name: "Connection", value: "close")
        } else if request.version.major == 1, request.version.minor == 0 {
            head.headers.replaceOrAdd(name: "Connection", value: "keep-alive")
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        guard let body = plan.body else {
            finish(context: context, keepAlive: keepAlive)
            return
        }
        context.flush()
        send(body, from: body.range.lowerBound, keepAlive: keepAlive, context: context)
    }

    /// Writes the chunk starting at `position`, and continues when it has been written.
    private func send(_ body: BodyPlan, from position: Int64, keepAlive: Bool, context: ChannelHandlerContext) {
        guard active else { return }
        let holdAt = body.hold.flatMap { hold -> Int64? in
            guard !hold.gate.isOpen else { return nil }
            switch hold.point {
            case .afterBytes(let bytes): return body.range.lowerBound + bytes
            case .atOffset(let offset): return offset >= body.range.lowerBound ? offset : nil
            }
        }
        if let holdAt, position >= holdAt {
            // Held (even where the body would end or be cut): look again shortly, as the gate has
            // no way to wake an event loop.
            context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(10)) {
                self.send(body, from: position, keepAlive: keepAlive, context: context)
            }
            return
        }
        let end = body.range.lowerBound + body.bytesToSend
        guard position < end else {
            if body.closesAbruptly {
                context.close(promise: nil)
            } else {
                finish(context: context, keepAlive: keepAlive)
            }
            return
        }
        var limit = Int64(chunkSize)
        if let rate = body.bytesPerSecond {
            limit = min(limit, max(1, Int64(rate / 10)))
        }
        if let holdAt { limit = min(limit, holdAt - position) }
        let count = min(limit, end - position)
        var buffer = context.channel.allocator.buffer(capacity: Int(count))
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: Int(count)) { pointer in
            body.content.copyBytes(
                in: position..<(position + count),
                into: UnsafeMutableRawBufferPointer(rebasing: pointer[0..<Int(count)])
            )
        }
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer)))).assumeIsolated().whenComplete {
            result in
            switch result {
            case .success:
                self.state.addBytesSent(count, for: body.path)
                let next = position + count
                let loop = context.eventLoop.assumeIsolated()
                if let rate = body.bytesPerSecond {
                    let delay = TimeAmount.nanoseconds(count * 1_000_000_000 / Int64(rate))
                    loop.scheduleTask(in: delay) {
                        self.send(body, from: next, keepAlive: keepAlive, context: context)
                    }
                } else {
                    // Through the loop rather than directly: a write that completed at once would
                    // otherwise recurse once per chunk.
                    loop.execute {
                        self.send(body, from: next, keepAlive: keepAlive, context: context)
                    }
                }
            case .failure:
                self.active = false
                context.close(promise: nil)
            }
        }
    }

    private func answerUpload(_ answer: (status: Int, headers: HTTPHeaders, body: String), request: HTTPRequestHead, context: ChannelHandlerContext) {
        var head = HTTPResponseHead(version: request.version, status: HTTPResponseStatus(statusCode: answer.status), headers: answer.headers)
        head.headers.replaceOrAdd(name: "Content-Length", value: String(answer.body.utf8.count))
        let keepAlive = request.isKeepAlive && answer.status < 400
        if !keepAlive { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: answer.body.utf8.count)
        buffer.writeString(answer.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        finish(context: context, keepAlive: keepAlive)
    }

    private func finish(context: ChannelHandlerContext, keepAlive: Bool) {
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
        }
    }
}
