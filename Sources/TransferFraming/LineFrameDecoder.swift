public import NIOCore

/// One request line, or the news that a line was longer than the limit (and was skipped).
public enum LineFrame: Sendable {
    case line(ByteBuffer)
    /// A line longer than `limit` bytes was skipped.
    case tooLong(limit: Int)
}

/// Splits the byte stream into `\n`-terminated lines of at most `maxLength` bytes. A longer line
/// is reported once as `.tooLong` and discarded up to its newline, so the connection stays usable
/// and the daemon never buffers more than the limit.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = LineFrame

    /// The longest line passed on, newline excluded.
    public let maxLength: Int
    private var discarding = false
    /// How far the current line has been searched, so each byte is scanned once.
    private var scanned = 0

    public init(maxLength: Int) {
        self.maxLength = maxLength
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        if let newline = view[(view.startIndex + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - view.startIndex
            scanned = 0
            if discarding || length > maxLength {
                buffer.moveReaderIndex(forwardBy: length + 1)
                if !discarding { context.fireChannelRead(wrapInboundOut(.tooLong(limit: maxLength))) }
                discarding = false
                return .continue
            }
            guard var line = buffer.readSlice(length: length) else { return .needMoreData }
            buffer.moveReaderIndex(forwardBy: 1)
            if line.readableBytesView.last == UInt8(ascii: "\r") {
                line = line.getSlice(at: line.readerIndex, length: line.readableBytes - 1) ?? line
            }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        if buffer.readableBytes > maxLength {
            if !discarding { context.fireChannelRead(wrapInboundOut(.tooLong(limit: maxLength))) }
            discarding = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            scanned = 0
            return .needMoreData
        }
        scanned = buffer.readableBytes
        return .needMoreData
    }

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        if try decode(context: context, buffer: &buffer) == .continue { return .continue }
        // A last request without its newline still counts.
        if seenEOF, !discarding, buffer.readableBytes > 0, let line = buffer.readSlice(length: buffer.readableBytes) {
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
