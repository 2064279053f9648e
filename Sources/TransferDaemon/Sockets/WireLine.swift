import Foundation
import NIOCore
import TransferProtocol

/// One message of the control protocol as the line that goes on the socket.
enum WireLine {
    /// `value` as compact JSON followed by a newline; nil when it cannot be encoded.
    static func encode(_ value: some Encodable) -> ByteBuffer? {
        guard var data = try? WireCoding.encode(value) else { return nil }
        data.append(UInt8(ascii: "\n"))
        return ByteBuffer(bytes: data)
    }
}
