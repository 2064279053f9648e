import Foundation
import TransferProtocol

/// Prints values on stdout as one line of JSON, in the wire's conventions.
enum JSONOutput {
    /// Prints `value` encoded by `WireCoding.encoder()`, followed by a newline.
    static func print(_ value: some Encodable) throws {
        Swift.print(String(decoding: try encode(value), as: UTF8.self))
    }

    /// `value` as one line of JSON, without the newline.
    static func encode(_ value: some Encodable) throws -> Data {
        try WireCoding.encoder().encode(value)
    }
}
